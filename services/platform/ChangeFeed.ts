import { Context, Effect, Layer } from "effect"
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

  /** After a commit: tell every instance that this request changed. Untraced: it runs on every commit. */
  const changed = Effect.fnUntraced(function* (uuid: string, version: string) {
    return yield* bus.notify(`${SUBJECT}.${uuid}`, version)
  })

  /**
   * Calls `wake` once on the next notice for this request; the returned cancel drops it. A plain callback, no
   * fiber: a long poll parked outside the HTTP fiber costs this closure and its timer.
   */
  const subscribe = (uuid: string, wake: () => void) => {
    let set = waiters.get(uuid)
    if (set === undefined) {
      set = new Set()
      waiters.set(uuid, set)
    }
    const own = set
    own.add(wake)
    return () => {
      own.delete(wake)
      if (own.size === 0 && waiters.get(uuid) === own) waiters.delete(uuid)
    }
  }

  const waiting = () => {
    let n = 0
    for (const set of waiters.values()) n += set.size
    return n
  }

  return { changed, subscribe, waiting } as const
})

export class ChangeFeed extends Context.Tag("deposits/ChangeFeed")<
  ChangeFeed,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.scoped(ChangeFeed, make)
}
