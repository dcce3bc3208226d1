import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import { depositRequestMachine, MACHINE_VERSION } from "../../machines/DepositRequest"
import { type DepositRequestEvent, explainStep, type Step, type TakenTransition } from "../../machines/step"
import { stepHistoryDays } from "../actors/StepHistorySettings"
import { chainIdOf } from "../domain/Environment"
import type { DepositRequestStatus } from "../domain/Lifecycle"
import { toId } from "../domain/PrefixedId"
import type { recogniseStepSearch } from "../domain/StepSearch"
import { serviceEnv } from "../platform/Settings"
import { orDieOnSql } from "../platform/SqlFailure"

/** A JSON value as stored. */
type Json = unknown

/** XState's state value: a state's name, or the child states of compound ones by their parents' names. */
export type StateValue = string | { readonly [key: string]: unknown }

/**
 * One change of the context between two snapshots: a dotted path, before and after, and whether a value (or a list
 * entry) was added, removed or changed. List entries are named by their identity (`pending[command_id=settle:…]`,
 * `credit_ids[=1:0xab…:0]`), not by their place, so a settle confirmed and a return commanded in one step read as
 * one removal and one addition rather than as the settle turning into the return.
 */
export interface ContextChange {
  readonly path: string
  readonly change: "added" | "removed" | "changed"
  readonly before: Json
  readonly after: Json
}

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
  readonly emitted: {
    readonly lifecycle: ReadonlyArray<string>
    readonly commands: ReadonlyArray<string>
    /** The lifecycle events this step's commit stored (`evt_…`): what webhooks deliver. */
    readonly events: ReadonlyArray<{ readonly id: string; readonly type: string }>
  }
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

/** The fields that name a list entry in the machine's context (commands, credits, recoveries). */
const IDENTITY_KEYS = ["command_id", "credit_id", "transfer_id", "id"] as const

/** An entry's identity within its list: its identity field, or its JSON when it is a plain value; none otherwise. */
const identityOf = (item: unknown): string | undefined => {
  if (isPlainObject(item)) {
    const key = IDENTITY_KEYS.find((k) => typeof item[k] === "string")
    return key === undefined ? undefined : `${key}=${item[key] as string}`
  }
  return typeof item === "object" ? undefined : `=${String(item)}`
}

const kindOf = (before: unknown, after: unknown): ContextChange["change"] =>
  before === undefined ? "added" : after === undefined ? "removed" : "changed"

/**
 * Every leaf (or whole value, where the kinds differ) that changed between two JSON values; absent is null. Lists
 * whose entries all have an identity are paired by it (an entry only before is a removal, only after an addition);
 * other lists by position.
 */
export const contextChanges = (before: unknown, after: unknown, path = ""): Array<ContextChange> => {
  const at = (key: string) => (path === "" ? key : `${path}.${key}`)
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    return keys.flatMap((k) => contextChanges(before[k], after[k], at(k)))
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const ids = (list: ReadonlyArray<unknown>) => list.map(identityOf)
    const idsBefore = ids(before)
    const idsAfter = ids(after)
    const all = [...idsBefore, ...idsAfter]
    const keyed = all.every((id) => id !== undefined) && new Set(idsBefore).size === idsBefore.length
    if (keyed && new Set(idsAfter).size === idsAfter.length) {
      const entry = (id: string) => `${path}[${id}]`
      const was = new Map(before.map((item, i) => [idsBefore[i]!, item]))
      const is = new Map(after.map((item, i) => [idsAfter[i]!, item]))
      return [
        ...[...was].flatMap(([id, item]) =>
          is.has(id)
            ? contextChanges(item, is.get(id), entry(id))
            : [{ path: entry(id), change: "removed" as const, before: item, after: null }]
        ),
        ...[...is]
          .filter(([id]) => !was.has(id))
          .map(([id, item]) => ({ path: entry(id), change: "added" as const, before: null, after: item }))
      ]
    }
    const out: Array<ContextChange> = []
    for (let i = 0; i < Math.max(before.length, after.length); i++)
      out.push(...contextChanges(before[i], after[i], at(String(i))))
    return out
  }
  return sameJson(before, after)
    ? []
    : [{ path, change: kindOf(before, after), before: before ?? null, after: after ?? null }]
}

const contextOf = (snapshot: unknown) => (isPlainObject(snapshot) ? snapshot.context : undefined)
const valueOf = (snapshot: unknown): StateValue => {
  const value = isPlainObject(snapshot) ? snapshot.value : undefined
  return typeof value === "string" || isPlainObject(value) ? value : ""
}

const emittedOf = (step: Step | undefined) => ({
  lifecycle: (step?.emitted ?? []).filter((e) => e.kind === "lifecycle").map((e) => e.type),
  commands: (step?.emitted ?? []).filter((e) => e.kind === "command").map((e) => e.type),
  events: [] as Array<{ readonly id: string; readonly type: string }>
})

/** A stored lifecycle event of a request: stamped with its step's commit instant. */
interface EventRow {
  readonly id: string
  readonly type: string
  readonly occurred_at: Date
}

/**
 * Each step given the lifecycle events its commit stored: same instant, and a type it emitted (a commit may step
 * a request more than once); an event the explanation cannot place goes to the last step of its instant.
 */
const withEvents = (steps: Array<RequestStep>, events: ReadonlyArray<EventRow>): Array<RequestStep> => {
  const placed = steps.map((s) => ({ ...s, emitted: { ...s.emitted, events: [...s.emitted.events] } }))
  for (const e of events) {
    const at = e.occurred_at.toISOString()
    const same = placed.filter((s) => s.at === at)
    const owner = same.find((s) => s.emitted.lifecycle.includes(e.type)) ?? same[same.length - 1]
    owner?.emitted.events.push({ id: toId("evt", e.id), type: e.type })
  }
  return placed
}

/** Where a search of the inspector led: a request and the step to open. */
export interface StepLocation {
  readonly deposit_request_id: string
  readonly version: number
  readonly matched: "deposit_request" | "event" | "webhook_delivery" | "transaction_hash" | "credit"
}

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
  const chainId = chainIdOf(yield* serviceEnv)

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
      const explained: Array<RequestStep> = []
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!
        if (Number(row.version) <= afterVersion) continue
        explained.push(explain(row, rows[i - 1], request.machine_version))
      }
      const instants = [...new Set(explained.map((s) => s.at))]
      const events =
        instants.length === 0
          ? []
          : yield* sql<EventRow>`
              select id, type, occurred_at from lifecycle_events
              where deposit_request_id = ${uuid} and occurred_at in ${sql.in(instants.map((at) => new Date(at)))}
              order by occurred_at, id`
      return Option.some<RequestSteps>({
        deposit_request_id: toId("dr", uuid),
        machine_version: request.machine_version,
        retained_from_version: request.retained_from === null ? null : Number(request.retained_from),
        data: withEvents(explained, events)
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

  /**
   * The account's kept step whose event carried this transaction hash (a credit, a settlement or a return
   * confirmed) or this credit; else the latest step of the request the transaction belongs to (a transfer sent and
   * not yet confirmed). The requests are found first through the credits' and transfers' hash indexes.
   */
  const stepNaming = (accountId: string, hash: string, creditId: string | undefined) =>
    // A credit names its chain; a bare hash is looked up on the service's. The search takes up to 12 digits of
    // chain, compared as bigint: one beyond the column's integer range names no credit rather than failing.
    sql<{ deposit_request_id: string; version: string }>`
      select s.deposit_request_id, s.version from deposit_request_steps s
      join deposit_requests d on d.id = s.deposit_request_id and d.account_id = ${accountId}
      where s.deposit_request_id in (
        select deposit_request_id from chain_credits
        where chain_id = ${creditId === undefined ? chainId : Number(creditId.split(":")[0])}::bigint
          and tx_hash = ${hash}
        union all
        select deposit_request_id from transfers where tx_hash = ${hash})
      order by ${
        creditId === undefined
          ? sql`(s.event->>'tx_hash' = ${hash} or s.event->>'credit_id' like ${`%:${hash}:%`}) is true`
          : sql`(s.event->>'credit_id' = ${creditId}) is true`
      } desc, s.version desc
      limit 1`

  /**
   * The step a search names, in the account's requests only (another account's id finds nothing): a request's
   * latest kept step; the step that emitted an event (or a delivery's event); the step whose event carried a
   * transaction hash (a credit, a settlement or a return confirmed) or a credit.
   */
  const find = Effect.fn("StepHistory.find")(function* (
    accountId: string,
    search: NonNullable<ReturnType<typeof recogniseStepSearch>>
  ) {
    const located = (
      deposit_request_id: string,
      version: string | number,
      matched: StepLocation["matched"]
    ) =>
      Option.some<StepLocation>({
        deposit_request_id: toId("dr", deposit_request_id),
        version: Number(version),
        matched
      })
    switch (search.kind) {
      case "dr": {
        const rows = yield* sql<{ version: string }>`
          select s.version from deposit_request_steps s
          join deposit_requests d on d.id = s.deposit_request_id and d.account_id = ${accountId}
          where s.deposit_request_id = ${search.uuid}
          order by s.version desc limit 1`
        return rows[0] === undefined
          ? Option.none()
          : located(search.uuid, rows[0].version, "deposit_request")
      }
      case "evt":
      case "whd": {
        const events = yield* search.kind === "evt"
          ? sql<{ deposit_request_id: string | null; type: string; occurred_at: Date }>`
              select deposit_request_id, type, occurred_at from lifecycle_events
              where id = ${search.uuid} and account_id = ${accountId}`
          : sql<{ deposit_request_id: string | null; type: string; occurred_at: Date }>`
              select e.deposit_request_id, e.type, e.occurred_at
              from webhook_deliveries w join lifecycle_events e on e.id = w.event_id
              where w.id = ${search.uuid} and w.account_id = ${accountId} and e.account_id = ${accountId}`
        const event = events[0]
        if (event === undefined || event.deposit_request_id === null) return Option.none()
        const candidates = yield* sql<{ version: string }>`
          select version from deposit_request_steps
          where deposit_request_id = ${event.deposit_request_id} and at = ${event.occurred_at}
          order by version`
        const matched = search.kind === "evt" ? "event" : "webhook_delivery"
        if (candidates.length <= 1)
          return candidates[0] === undefined
            ? Option.none()
            : located(event.deposit_request_id, candidates[0].version, matched)
        // A commit that stepped the request more than once: the step whose explanation emitted the type.
        const explained = yield* forRequest(
          accountId,
          event.deposit_request_id,
          Number(candidates[0]!.version) - 1
        )
        const steps = Option.isSome(explained) ? explained.value.data : []
        const owner =
          steps.find((s) => s.emitted.lifecycle.includes(event.type)) ?? steps[candidates.length - 1]
        return owner === undefined ? Option.none() : located(event.deposit_request_id, owner.version, matched)
      }
      case "transaction_hash": {
        const rows = yield* stepNaming(accountId, search.hash, undefined)
        const row = rows[0]
        return row === undefined
          ? Option.none()
          : located(row.deposit_request_id, row.version, "transaction_hash")
      }
      case "credit": {
        const rows = yield* stepNaming(accountId, search.creditId.split(":")[1]!, search.creditId)
        const row = rows[0]
        return row === undefined ? Option.none() : located(row.deposit_request_id, row.version, "credit")
      }
    }
  }, orDieOnSql)

  return { forRequest, allForRequest, hasStepsAfter, feed, feedHasAfter, sweep, find, days } as const
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
