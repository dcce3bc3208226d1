import { Effect } from "effect"
import { Bus } from "./Bus"

const SUBJECT = "deposits.changed"
/** `deposits.created.<account uuid>`: a request was created in the account (wakes its live lists). */
const CREATED = "deposits.created"

/**
 * Change notices for long polls. A committed change publishes `deposits.changed.<uuid>`; each instance holds ONE
 * wildcard subscription and wakes its local waiters, so a waiter costs a closure, not a database poll.
 */
const make = Effect.gen(function* () {
  const bus = yield* Bus
  const waiters = new Map<string, Set<() => void>>()
  const accountWaiters = new Map<string, Set<() => void>>()
  const stepWaiters = new Map<string, Set<() => void>>()
  // Every step in any account (the operators' all-accounts feed).
  const anyStepWaiters = new Set<() => void>()

  const wakeAll = (map: Map<string, Set<() => void>>, key: string) => {
    const set = map.get(key)
    if (set === undefined) return
    map.delete(key)
    for (const wake of set) wake()
  }
  const wakeAnyStep = () => {
    if (anyStepWaiters.size === 0) return
    const woken = [...anyStepWaiters]
    anyStepWaiters.clear()
    for (const wake of woken) wake()
  }
  /** A step of an account: its step feeds wake (a notice from a build that named no account wakes none). */
  const stepped = (accountId: string | undefined) => {
    if (accountId !== undefined) wakeAll(stepWaiters, accountId)
    wakeAnyStep()
  }
  yield* bus.listen(`${SUBJECT}.*`, (subject, data) => {
    wakeAll(waiters, subject.slice(SUBJECT.length + 1))
    const space = data.indexOf(" ")
    stepped(space === -1 ? undefined : data.slice(space + 1))
  })
  yield* bus.listen(`${CREATED}.*`, (subject) => {
    const accountId = subject.slice(CREATED.length + 1)
    wakeAll(accountWaiters, accountId)
    stepped(accountId)
  })

  /**
   * After a commit: tell every instance that this request changed (to `version`), and, when the change was a step
   * of its actor, in which account (the data is `version account`, for the step feeds).
   */
  const changed = (uuid: string, version: string, accountId?: string) =>
    bus.notify(`${SUBJECT}.${uuid}`, accountId === undefined ? version : `${version} ${accountId}`)

  /** After an actor commit: `changed` for each of its rows (steps of their actors), as one effect per commit. */
  const changedRows = (
    rows: Iterable<{ readonly id: string; readonly version: string; readonly account_id: string }>
  ) => {
    const notices: Array<readonly [string, string]> = []
    for (const row of rows) notices.push([`${SUBJECT}.${row.id}`, `${row.version} ${row.account_id}`])
    return bus.notifyAll(notices)
  }

  /** After a create's commit: tell every instance that the account has a new request. */
  const created = (accountId: string) => bus.notify(`${CREATED}.${accountId}`, "1")

  const add = (map: Map<string, Set<() => void>>, key: string, wake: () => void) => {
    let set = map.get(key)
    if (set === undefined) {
      set = new Set()
      map.set(key, set)
    }
    const own = set
    own.add(wake)
    return () => {
      own.delete(wake)
      if (own.size === 0 && map.get(key) === own) map.delete(key)
    }
  }

  /**
   * Calls `wake` once on the next notice for this request; the returned cancel drops it. A plain callback, no
   * fiber: a long poll parked outside the HTTP fiber costs this closure and its timer.
   */
  const subscribe = (uuid: string, wake: () => void) => add(waiters, uuid, wake)

  /** Calls `wake` once on the next create in this account; the returned cancel drops it. */
  const subscribeCreated = (accountId: string, wake: () => void) => add(accountWaiters, accountId, wake)

  /** Calls `wake` once on the next step (a create included) in this account; the returned cancel drops it. */
  const subscribeStepped = (accountId: string, wake: () => void) => add(stepWaiters, accountId, wake)

  /** Calls `wake` once on the next step in any account (operators only); the returned cancel drops it. */
  const subscribeAnyStep = (wake: () => void) => {
    anyStepWaiters.add(wake)
    return () => {
      anyStepWaiters.delete(wake)
    }
  }

  const waiting = () => {
    let n = anyStepWaiters.size
    for (const set of waiters.values()) n += set.size
    for (const set of accountWaiters.values()) n += set.size
    for (const set of stepWaiters.values()) n += set.size
    return n
  }

  return {
    changed,
    changedRows,
    created,
    subscribe,
    subscribeCreated,
    subscribeStepped,
    subscribeAnyStep,
    waiting
  } as const
})

export class ChangeFeed extends Effect.Service<ChangeFeed>()("deposits/ChangeFeed", { scoped: make }) {}
