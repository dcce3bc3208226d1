import { Context, Deferred, Effect, Exit, Layer } from "effect"
import { Bus } from "./Bus"

const SUBJECT = "deposits.changed"

/**
 * Change notices for long polls. A committed change publishes `deposits.changed.<uuid>`; each instance holds ONE
 * wildcard subscription and wakes its local waiters, so a waiter costs a closure, not a database poll.
 */
const make = Effect.gen(function* () {
  const bus = yield* Bus
  const waiters = new Map<string, Set<() => void>>()

  yield* bus.listen(`${SUBJECT}.*`, (subject) => {
    const uuid = subject.slice(SUBJECT.length + 1)
    const set = waiters.get(uuid)
    if (set === undefined) return
    waiters.delete(uuid)
    for (const wake of set) wake()
  })

  /** After a commit: tell every instance that this request changed. */
  const changed = (uuid: string, version: string) => bus.notify(`${SUBJECT}.${uuid}`, version)

  /**
   * Registers interest in a request now (before the caller re-reads its row, so a change committed in between
   * is not missed) and hands back a wait that ends on the next notice or after the timeout. Closing the scope
   * (the answer was sent, or the client went away and the fiber was interrupted) drops the waiter at once.
   */
  const watch = (uuid: string) =>
    Effect.gen(function* () {
      const notice = yield* Deferred.make<void>()
      const wake = () => Deferred.unsafeDone(notice, Exit.void)
      let set = waiters.get(uuid)
      if (set === undefined) {
        set = new Set()
        waiters.set(uuid, set)
      }
      const own = set
      own.add(wake)
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          own.delete(wake)
          if (own.size === 0 && waiters.get(uuid) === own) waiters.delete(uuid)
        })
      )
      return (timeoutMs: number) =>
        Deferred.await(notice).pipe(
          Effect.as("changed" as const),
          Effect.timeoutTo({ duration: timeoutMs, onTimeout: () => "timeout" as const, onSuccess: (x) => x })
        )
    })

  const waiting = () => {
    let n = 0
    for (const set of waiters.values()) n += set.size
    return n
  }

  return { changed, watch, waiting } as const
})

export class ChangeFeed extends Context.Tag("deposits/ChangeFeed")<
  ChangeFeed,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.scoped(ChangeFeed, make)
}
