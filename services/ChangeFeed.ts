import { Context, Effect, Layer, Option } from "effect"
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
   * is not missed) and hands back a wait that ends on the next notice or after the timeout, and a cancel the
   * caller runs when it is done (the answer was sent, or the client went away and the fiber was interrupted).
   * Plain callbacks and one timer per waiter: with ten thousand waiters held, every byte per waiter counts.
   */
  const register = (uuid: string) =>
    Effect.sync(() => {
      let notified = false
      let resume: ((effect: Effect.Effect<"changed" | "timeout">) => void) | undefined
      let timer: ReturnType<typeof setTimeout> | undefined
      const wake = () => {
        notified = true
        const r = resume
        resume = undefined
        if (timer !== undefined) clearTimeout(timer)
        r?.(Effect.succeed("changed"))
      }
      let set = waiters.get(uuid)
      if (set === undefined) {
        set = new Set()
        waiters.set(uuid, set)
      }
      const own = set
      own.add(wake)
      const cancel = () => {
        resume = undefined
        if (timer !== undefined) clearTimeout(timer)
        own.delete(wake)
        if (own.size === 0 && waiters.get(uuid) === own) waiters.delete(uuid)
      }
      const wait = (timeoutMs: number) =>
        Effect.async<"changed" | "timeout">((cb) => {
          if (notified) return cb(Effect.succeed("changed"))
          resume = cb
          timer = setTimeout(() => {
            resume = undefined
            cb(Effect.succeed("timeout"))
          }, timeoutMs)
          return Effect.sync(cancel)
        }).pipe(Effect.ensuring(Effect.sync(cancel)))
      return { wait, cancel }
    })

  /**
   * The long-poll step every versioned read shares: the row now if its version differs from the caller's,
   * otherwise the row as it is after the next change (or the timeout). `readAfter` may differ from `read` (a read
   * shared by every waiter woken by one change).
   */
  const nextVersion = <Row extends { readonly version: string }, E, R>(
    uuid: string,
    known: string,
    timeoutMs: number,
    read: Effect.Effect<Option.Option<Row>, E, R>,
    readAfter: Effect.Effect<Option.Option<Row>, E, R> = read
  ) =>
    Effect.gen(function* () {
      const watch = yield* register(uuid)
      const first = yield* read.pipe(Effect.onError(() => Effect.sync(watch.cancel)))
      if (Option.isNone(first) || first.value.version !== known) {
        watch.cancel()
        return first
      }
      yield* watch.wait(timeoutMs)
      return yield* readAfter
    })

  const waiting = () => {
    let n = 0
    for (const set of waiters.values()) n += set.size
    return n
  }

  return { changed, register, nextVersion, waiting } as const
})

export class ChangeFeed extends Context.Tag("deposits/ChangeFeed")<
  ChangeFeed,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.scoped(ChangeFeed, make)
}
