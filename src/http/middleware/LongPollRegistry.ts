import { Context, Effect, Layer, Option } from "effect"
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
export class LongPollRegistry extends Context.Tag("deposits/LongPollRegistry")<
  LongPollRegistry,
  {
    /** Takes one of the address's places; false when it already holds `max` polls. */
    readonly take: (address: string, max: number) => boolean
    readonly release: (address: string) => void
    /** Adds a waiting poll; false when the instance is closing (the caller answers at once). */
    readonly park: (poll: Parked) => boolean
    readonly unpark: (poll: Parked) => void
    /**
     * Whether the instance is closing: then a poll's answer closes its connection, so the client's next poll
     * goes elsewhere rather than to this instance's handlers as they go.
     */
    readonly closing: () => boolean
  }
>() {
  static readonly layer = Layer.scoped(
    LongPollRegistry,
    Effect.gen(function* () {
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
        take: (address, max) => {
          const holding = held.get(address) ?? 0
          if (holding >= max) return false
          held.set(address, holding + 1)
          return true
        },
        release: (address) => {
          const n = (held.get(address) ?? 1) - 1
          if (n <= 0) held.delete(address)
          else held.set(address, n)
        },
        park: (poll) => {
          if (closing) return false
          parked.add(poll)
          return true
        },
        unpark: (poll) => {
          parked.delete(poll)
        },
        closing: () => closing
      }
    })
  )
}
