import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import { depositRequestMachine, MACHINE_VERSION } from "../../machines/DepositRequest"
import { type DepositRequestEvent, explainStep, type Step, type TakenTransition } from "../../machines/step"
import { stepHistoryDays } from "../actors/StepHistorySettings"
import type { DepositRequestStatus } from "../domain/Lifecycle"
import { toId } from "../domain/PrefixedId"
import { orDieOnSql } from "../platform/SqlFailure"

/** A JSON value as stored. */
type Json = unknown

/** XState's state value: a state's name, or the child states of compound ones by their parents' names. */
export type StateValue = string | { readonly [key: string]: unknown }

/** One change of the context between two snapshots: a dotted path (array items by index), before and after. */
export interface ContextChange {
  readonly path: string
  readonly before: Json
  readonly after: Json
}

/** One kept step of a request, explained: what the inspector's history shows. */
export interface RequestStep {
  readonly version: number
  readonly event_id: string
  readonly event: { readonly type: string } & Record<string, Json>
  /** The commit's instant, ISO 8601 with milliseconds. */
  readonly at: string
  readonly instance: string
  readonly status_before: DepositRequestStatus | null
  readonly status_after: DepositRequestStatus
  readonly state_before: StateValue | null
  readonly state_after: StateValue
  readonly transition: TakenTransition | null
  readonly emitted: { readonly lifecycle: ReadonlyArray<string>; readonly commands: ReadonlyArray<string> }
  readonly snapshot_before: Json | null
  readonly snapshot_after: Json
  readonly context_changes: ReadonlyArray<ContextChange>
}

export interface RequestSteps {
  readonly deposit_request_id: string
  readonly machine_version: number
  /** The first version the history still holds (1 when it is whole), null when it holds none. */
  readonly retained_from_version: number | null
  readonly data: ReadonlyArray<RequestStep>
}

/** One step in a feed across requests (`account_id` only in the operators' all-accounts feed). */
export interface FeedStep {
  readonly account_id?: string
  readonly deposit_request_id: string
  readonly version: number
  readonly event_type: string
  readonly status_before: DepositRequestStatus | null
  readonly status_after: DepositRequestStatus
  readonly at: string
  readonly instance: string
}

export interface Feed {
  readonly data: ReadonlyArray<FeedStep>
  /** The `seq` of the last step answered (or the newest seen): pass it back as `after`. */
  readonly next_cursor: string
}

/** The event a history starts with: the create, which took no event and made version 1. */
export const CREATE_EVENT_TYPE = "xstate.init"

/** At most this many steps per read of one request's history: the caller asks again after the last. */
export const REQUEST_STEPS_LIMIT = 500
/** Rows one sweep statement deletes, so a sweep never holds many row locks or a long transaction. */
export const SWEEP_BATCH = 1000

interface StepRow {
  readonly version: string
  readonly event_id: string
  readonly event: { readonly type: string } & Record<string, Json>
  readonly at: Date
  readonly instance: string
  readonly status: DepositRequestStatus
  readonly snapshot: Json
}

interface FeedRow {
  readonly seq: string
  readonly account_id: string
  readonly deposit_request_id: string
  readonly version: string
  readonly event_type: string
  readonly status_before: DepositRequestStatus | null
  readonly status: DepositRequestStatus
  readonly at: Date
  readonly instance: string
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v)

const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]))
  }
  return false
}

/** Every leaf (or whole value, where the kinds differ) that changed between two JSON values; absent is null. */
export const contextChanges = (before: unknown, after: unknown, path = ""): Array<ContextChange> => {
  const at = (key: string) => (path === "" ? key : `${path}.${key}`)
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    return keys.flatMap((k) => contextChanges(before[k], after[k], at(k)))
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: Array<ContextChange> = []
    for (let i = 0; i < Math.max(before.length, after.length); i++)
      out.push(...contextChanges(before[i], after[i], at(String(i))))
    return out
  }
  return sameJson(before, after) ? [] : [{ path, before: before ?? null, after: after ?? null }]
}

const contextOf = (snapshot: unknown) => (isPlainObject(snapshot) ? snapshot.context : undefined)
const valueOf = (snapshot: unknown): StateValue => {
  const value = isPlainObject(snapshot) ? snapshot.value : undefined
  return typeof value === "string" || isPlainObject(value) ? value : ""
}

const emittedOf = (step: Step | undefined) => ({
  lifecycle: (step?.emitted ?? []).filter((e) => e.kind === "lifecycle").map((e) => e.type),
  commands: (step?.emitted ?? []).filter((e) => e.kind === "command").map((e) => e.type)
})

/**
 * A kept step explained: its transition and what it emitted come from stepping the snapshot before it again
 * (the machine is pure); a step whose snapshot before is not kept (the first, or the first retained), or that
 * the current machine cannot take again (another machine version), shows none.
 */
const explain = (row: StepRow, before: StepRow | undefined, machineVersion: number): RequestStep => {
  let transition: TakenTransition | null = null
  let step: Step | undefined
  if (before !== undefined && row.event.type !== CREATE_EVENT_TYPE && machineVersion === MACHINE_VERSION) {
    try {
      const explained = explainStep(before.snapshot, row.event as unknown as DepositRequestEvent)
      transition = explained.transition
      step = explained.step
    } catch {
      // A stored event the machine no longer understands: shown without an explanation.
    }
  }
  return {
    version: Number(row.version),
    event_id: row.event_id,
    event: row.event,
    at: row.at.toISOString(),
    instance: row.instance,
    status_before: before?.status ?? null,
    status_after: row.status,
    state_before: before === undefined ? null : valueOf(before.snapshot),
    state_after: valueOf(row.snapshot),
    transition,
    emitted: emittedOf(step),
    snapshot_before: before?.snapshot ?? null,
    snapshot_after: row.snapshot,
    context_changes:
      before === undefined ? [] : contextChanges(contextOf(before.snapshot), contextOf(row.snapshot))
  }
}

const feedStep = (r: FeedRow): FeedStep => ({
  deposit_request_id: toId("dr", r.deposit_request_id),
  version: Number(r.version),
  event_type: r.event_type,
  status_before: r.status_before,
  status_after: r.status,
  at: r.at.toISOString(),
  instance: r.instance
})

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const days = yield* stepHistoryDays

  /**
   * A request's kept steps after `afterVersion`, in version order (at most `REQUEST_STEPS_LIMIT`), each with the
   * snapshot before it: `None` when the request is not the account's.
   */
  const forRequest = (accountId: string, uuid: string, afterVersion: number) =>
    Effect.gen(function* () {
      const found = yield* sql<{ machine_version: number; retained_from: string | null }>`
        select d.machine_version,
          (select min(s.version) from deposit_request_steps s where s.deposit_request_id = d.id) as retained_from
        from deposit_requests d where d.id = ${uuid} and d.account_id = ${accountId}`
      const request = found[0]
      if (request === undefined) return Option.none<RequestSteps>()
      // The kept step just before the first answered one, for its snapshot and status before.
      const rows = yield* sql<StepRow>`
        (select version, event_id, event, at, instance, status, snapshot from deposit_request_steps
          where deposit_request_id = ${uuid} and version <= ${afterVersion} order by version desc limit 1)
        union all
        (select version, event_id, event, at, instance, status, snapshot from deposit_request_steps
          where deposit_request_id = ${uuid} and version > ${afterVersion} order by version
          limit ${REQUEST_STEPS_LIMIT})
        order by version`
      const data: Array<RequestStep> = []
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!
        if (Number(row.version) <= afterVersion) continue
        data.push(explain(row, rows[i - 1], request.machine_version))
      }
      return Option.some<RequestSteps>({
        deposit_request_id: toId("dr", uuid),
        machine_version: request.machine_version,
        retained_from_version: request.retained_from === null ? null : Number(request.retained_from),
        data
      })
    }).pipe(orDieOnSql)

  /** Whether the request has a kept step after `afterVersion` (a long poll's check after it subscribed). */
  const hasStepsAfter = (uuid: string, afterVersion: number) =>
    sql<{ one: number }>`
      select 1 as one from deposit_request_steps
      where deposit_request_id = ${uuid} and version > ${afterVersion} limit 1`.pipe(
      Effect.map((rows) => rows.length > 0),
      orDieOnSql
    )

  /**
   * Steps across requests, oldest first: of one account, or of every account (`accountId` undefined: operators
   * only). After the cursor `after`, the next `limit`; without it, the latest `limit`. `status` filters on the
   * status a step left.
   */
  const feed = (options: {
    readonly accountId: string | undefined
    readonly after: bigint | undefined
    readonly status: string | undefined
    readonly limit: number
  }) =>
    Effect.gen(function* () {
      const { accountId, after, status, limit } = options
      const where = [
        accountId === undefined ? sql`true` : sql`s.account_id = ${accountId}`,
        after === undefined ? sql`true` : sql`s.seq > ${after.toString()}`,
        status === undefined ? sql`true` : sql`s.status = ${status}`
      ]
      const rows = yield* sql<FeedRow>`
        select * from (
          select s.seq, s.account_id, s.deposit_request_id, s.version, s.event->>'type' as event_type,
            (select p.status from deposit_request_steps p
              where p.deposit_request_id = s.deposit_request_id and p.version < s.version
              order by p.version desc limit 1) as status_before,
            s.status, s.at, s.instance
          from deposit_request_steps s
          where ${sql.and(where)}
          order by s.seq ${after === undefined ? sql`desc` : sql`asc`}
          limit ${limit}
        ) page order by seq`
      const last = rows[rows.length - 1]
      const data = rows.map((r) =>
        accountId === undefined ? { account_id: toId("acct", r.account_id), ...feedStep(r) } : feedStep(r)
      )
      if (last !== undefined) return { data, next_cursor: last.seq } satisfies Feed
      if (after !== undefined) return { data: [], next_cursor: after.toString() } satisfies Feed
      // Nothing yet (or nothing of that status): the cursor is the newest step there is, so a poll waits for the next.
      const newest = yield* sql<{ seq: string | null }>`
        select max(s.seq) as seq from deposit_request_steps s
        where ${accountId === undefined ? sql`true` : sql`s.account_id = ${accountId}`}`
      return { data: [], next_cursor: newest[0]?.seq ?? "0" } satisfies Feed
    }).pipe(orDieOnSql)

  /** Whether a step came after the cursor (of one account, or of any): a live feed's check once subscribed. */
  const feedHasAfter = (accountId: string | undefined, after: bigint) =>
    sql<{ one: number }>`
      select 1 as one from deposit_request_steps s
      where ${accountId === undefined ? sql`true` : sql`s.account_id = ${accountId}`}
        and s.seq > ${after.toString()}
      limit 1`.pipe(
      Effect.map((rows) => rows.length > 0),
      orDieOnSql
    )

  /**
   * Deletes steps older than the retention (`STEP_HISTORY_DAYS`; with 0, every step), oldest first, at most
   * `SWEEP_BATCH` a statement: how many it deleted (a full batch means there may be more).
   */
  const sweep = Effect.fn("StepHistory.sweep")(function* () {
    const now = yield* Clock.currentTimeMillis
    const cutoff = new Date(now - days * 86_400_000)
    // By `seq`, the insertion order, which the commits' instants follow closely: the oldest batch is read through
    // its index and only its rows older than the cutoff go, so a sweep never scans the recent history.
    const deleted = yield* sql<{ n: string }>`
      with oldest as (
        select seq, at from deposit_request_steps order by seq limit ${SWEEP_BATCH}
      ), gone as (
        delete from deposit_request_steps s using oldest o
        where s.seq = o.seq and o.at < ${cutoff}
        returning 1
      )
      select count(*)::text as n from gone`
    return Number(deleted[0]?.n ?? "0")
  }, orDieOnSql)

  /** Every kept step of a request (read page by page): `None` when the request is not the account's. */
  const allForRequest = (accountId: string, uuid: string) =>
    Effect.gen(function* () {
      const first = yield* forRequest(accountId, uuid, 0)
      if (Option.isNone(first)) return first
      const data = [...first.value.data]
      let page = first.value.data
      while (page.length === REQUEST_STEPS_LIMIT) {
        const next = yield* forRequest(accountId, uuid, data[data.length - 1]!.version)
        page = Option.isNone(next) ? [] : next.value.data
        data.push(...page)
      }
      return Option.some<RequestSteps>({ ...first.value, data })
    })

  return { forRequest, allForRequest, hasStepsAfter, feed, feedHasAfter, sweep, days } as const
})

/** The step history's reads and its retention sweep (infra/decisions/0066-step-history.md). */
export class StepHistory extends Effect.Service<StepHistory>()("deposits/StepHistory", {
  effect: make
}) {}

/** The machine's definition as Stately's tools take it (`@xstate.actor`'s `definition`). */
export const machineDefinitionJson = (): string => JSON.stringify(depositRequestMachine.config)

/** `@statelyai/inspect`'s protocol version, as its inspectors stamp every event (`_version`). */
export const STATELY_INSPECT_VERSION = "0.7.2"

/**
 * A request's history as the inspection events Stately's inspector takes, in the shapes `@statelyai/inspect`
 * sends (`StatelyActorEvent`, `StatelyEventEvent`, `StatelySnapshotEvent`): the actor with the machine's definition
 * and its first kept snapshot, then per step the event and the snapshot it left. Times are the commits' (epoch
 * milliseconds as text, as the library writes `createdAt`); `parentId` and `sourceId` are left out, as the library's
 * JSON leaves them for a root actor and an event without a sender.
 */
export const statelyEvents = (history: RequestSteps): ReadonlyArray<Record<string, unknown>> => {
  const [first, ...rest] = history.data
  if (first === undefined) return []
  const sessionId = history.deposit_request_id
  const base = (at: string) => ({
    sessionId,
    rootId: sessionId,
    createdAt: String(Date.parse(at)),
    _version: STATELY_INSPECT_VERSION
  })
  const events: Array<Record<string, unknown>> = [
    {
      type: "@xstate.actor",
      name: depositRequestMachine.id,
      ...base(first.at),
      id: `${sessionId}:${first.version}`,
      definition: machineDefinitionJson(),
      snapshot: first.snapshot_after
    }
  ]
  for (const s of rest) {
    const id = `${sessionId}:${s.version}`
    events.push(
      { type: "@xstate.event", ...base(s.at), id: `${id}:event`, event: s.event },
      {
        type: "@xstate.snapshot",
        ...base(s.at),
        id: `${id}:snapshot`,
        event: s.event,
        snapshot: s.snapshot_after
      }
    )
  }
  return events
}
