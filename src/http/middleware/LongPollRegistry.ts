import { Effect, Option } from "effect"
import { ListeningServer } from "./ListeningServer"

/** A poll waiting outside its fiber, as the registry knows it. */
export interface Parked {
  /** Answers with the resource as it now is (a change, the timeout or a closing instance). */
  readonly finish: () => void
}

/**
 * The instance's long polls: how many each client address holds (bounded per address), and the ones parked
 * outside their fibers. When the service's scope closes, its finalizer answers every parked poll at once (with
 * the resource as it is) and any poll that parks afterwards is answered at once, so a shutdown is never held
 * by polls waiting out their timeouts. Released before the HTTP server closes: it is built after it.
 */
export class LongPollRegistry extends Effect.Service<LongPollRegistry>()("deposits/LongPollRegistry", {
  // Plain functions, not Effects: every long poll calls them, and each is a read or write of a map in memory.
  scoped: Effect.gen(function* () {
    const held = new Map<string, number>()
    const parked = new Set<Parked>()
    let closing = false
    const server = yield* Effect.serviceOption(ListeningServer)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closing = true
        // New connections are refused from here on, and the polls answered below close theirs.
        Option.map(server, (s) => s.stopAccepting())
        for (const poll of [...parked]) poll.finish()
      })
    )
    return {
      /** Takes one of the address's places; false when it already holds `max` polls. */
      take: (address: string, max: number): boolean => {
        const holding = held.get(address) ?? 0
        if (holding >= max) return false
        held.set(address, holding + 1)
        return true
      },
      release: (address: string): void => {
        const n = (held.get(address) ?? 1) - 1
        if (n <= 0) held.delete(address)
        else held.set(address, n)
      },
      /** Adds a waiting poll; false when the instance is closing (the caller answers at once). */
      park: (poll: Parked): boolean => {
        if (closing) return false
        parked.add(poll)
        return true
      },
      unpark: (poll: Parked): void => {
        parked.delete(poll)
      },
      /**
       * Whether the instance is closing: then a poll's answer closes its connection, so the client's next poll
       * goes elsewhere rather than to this instance's handlers as they go.
       */
      closing: (): boolean => closing
    }
  })
}) {}
