import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Data, Effect, Layer, Schedule } from "effect"
import { MACHINE_VERSION } from "../machines/DepositRequest"
import {
  type DepositRequestContext,
  type DepositRequestEvent,
  type DepositRequestInput,
  type Step,
  start,
  step
} from "../machines/step"
import { toId } from "./domain/PrefixedId"
import { publicBaseUrl, serviceEnv } from "./Settings"
import { chainIdOf } from "./domain/Environment"
import { type DepositRequestRow, lifecycleFactsOf, toWire } from "./DepositRequestView"
import { addRecords, emptyRecords } from "./LifecycleRecords"
import { ChangeFeed } from "./ChangeFeed"
import { Ids } from "./Ids"
import { Inspector } from "./Inspector"
import { Metrics } from "./Metrics"
import { currentTraceParent } from "./TraceContext"

/** A snapshot this code cannot restore: the row names a machine version with no migration to the current one. */
export class SnapshotVersionError extends Data.TaggedError("SnapshotVersionError")<{
  readonly depositRequestId: string
  readonly found: number
  readonly expected: number
}> {
  override get message() {
    return `deposit request ${this.depositRequestId} has a snapshot of machine version ${this.found}, this build runs ${this.expected}; deploy a snapshot migration for ${this.found} → ${this.expected} (machines/snapshotMigrations.ts) before this build, see the README`
  }
}

export class DepositRequestMissing extends Data.TaggedError("DepositRequestMissing")<{
  readonly id: string
}> {}

/** What the caller of `apply` learns. */
export type Applied =
  | { readonly _tag: "Applied"; readonly row: DepositRequestRow; readonly step: Step }
  | { readonly _tag: "Duplicate" }

/** An event for one request, with the id it is deduplicated by. */
export interface ActorEvent {
  readonly depositRequestId: string
  readonly eventId: string
  readonly event: DepositRequestEvent
}

/** What one commit wrote: each event stepped (in the order given) and each request's final row. */
interface Committed {
  readonly stepped: ReadonlyArray<{
    readonly id: string
    readonly event: DepositRequestEvent
    readonly step: Step
  }>
  readonly finals: ReadonlyMap<string, DepositRequestRow>
}

/** Two writers of one row serialize on its lock; a deadlock or serialization failure is tried again. */
const isWriteConflict = (e: unknown) =>
  (e as { readonly _tag?: string })._tag === "SqlError" &&
  /deadlock|could not serialize/i.test(String((e as { readonly cause?: unknown }).cause))
const writeConflictRetry = Schedule.exponential("10 millis").pipe(Schedule.intersect(Schedule.recurs(5)))

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const feed = yield* ChangeFeed
  const inspector = yield* Inspector
  const metrics = yield* Metrics
  const chainId = chainIdOf(yield* serviceEnv)
  const baseUrl = yield* publicBaseUrl
  const newId = () => ids.next()

  /** The actor's first step and the row that stores it, not yet written (the create's group commit writes it). */
  const firstStep = (
    params: Omit<
      DepositRequestRow,
      "status" | "version" | "machine_version" | "snapshot" | "received_base_units" | "updated_at"
    >,
    input: DepositRequestInput
  ) => {
    const s = start(input)
    // Field by field rather than `{ ...params, … }`: properties added after a spread are slow (README: Decisions).
    const row: DepositRequestRow = {
      id: params.id,
      account_id: params.account_id,
      amount_base_units: params.amount_base_units,
      heading: params.heading,
      reference: params.reference,
      metadata: params.metadata,
      customer_id: params.customer_id,
      issuer_id: params.issuer_id,
      payout_address_id: params.payout_address_id,
      payer_policy_mode: params.payer_policy_mode,
      expected_email: params.expected_email,
      payer_reference: params.payer_reference,
      deposit_index: params.deposit_index,
      deposit_address: params.deposit_address,
      expires_at: params.expires_at,
      created_at: params.created_at,
      status: s.status,
      version: "1",
      machine_version: MACHINE_VERSION,
      snapshot: s.snapshot,
      received_base_units: lifecycleFactsOf(s).receivedBaseUnits,
      updated_at: params.created_at
    }
    return { row, step: s }
  }

  /** To call once a first step's row is committed: shows the new actor to the inspector. */
  const created = (row: DepositRequestRow) => inspector.created(toId("dr", row.id), row.snapshot)

  /** The writes of one commit, in the caller's transaction: lock, dedupe, step, and write all that follows. */
  const writeSteps = (items: ReadonlyArray<ActorEvent>, trace_parent: string | null) =>
    Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      const stepped: Array<Committed["stepped"][number]> = []
      const finals = new Map<string, DepositRequestRow>()
      if (items.length === 0) return { stepped, finals } satisfies Committed
      // Lock the rows first, in id order (one writer per request; two commits cannot deadlock). Inserting the
      // dedupe records first would take key-share locks through their foreign key, and upgrading them would.
      const requestIds = [...new Set(items.map((i) => i.depositRequestId))].sort()
      const rows = yield* sql<DepositRequestRow>`
        select * from deposit_requests where id in ${sql.in(requestIds)} order by id for update`
      const current = new Map(rows.map((r) => [r.id, r]))
      const missing = requestIds.find((id) => !current.has(id))
      if (missing !== undefined) return yield* new DepositRequestMissing({ id: missing })
      const fresh = yield* sql<{ deposit_request_id: string; event_id: string }>`
        insert into applied_events ${sql.insert(
          items.map((i) => ({ deposit_request_id: i.depositRequestId, event_id: i.eventId, applied_at: now }))
        )}
        on conflict do nothing
        returning deposit_request_id, event_id`
      const unseen = new Set(fresh.map((f) => `${f.deposit_request_id} ${f.event_id}`))
      const records = emptyRecords()
      for (const item of items) {
        if (!unseen.delete(`${item.depositRequestId} ${item.eventId}`)) continue
        const before = current.get(item.depositRequestId)!
        if (before.machine_version !== MACHINE_VERSION) {
          return yield* new SnapshotVersionError({
            depositRequestId: before.id,
            found: before.machine_version,
            expected: MACHINE_VERSION
          })
        }
        const s = yield* Effect.sync(() => step(before.snapshot, item.event)).pipe(
          Effect.withSpan("DepositRequest.step", {
            attributes: { "deposit_request.id": toId("dr", before.id), "event.type": item.event.type }
          })
        )
        const facts = lifecycleFactsOf(s)
        const row: DepositRequestRow = {
          ...before,
          status: s.status,
          version: (BigInt(before.version) + 1n).toString(),
          snapshot: s.snapshot,
          received_base_units: facts.receivedBaseUnits,
          deposit_address: facts.address ?? before.deposit_address,
          updated_at: now
        }
        current.set(row.id, row)
        finals.set(row.id, row)
        stepped.push({ id: row.id, event: item.event, step: s })
        addRecords(records, row, s, now, newId, chainId, baseUrl)
      }
      if (finals.size > 0) {
        yield* sql`
          update deposit_requests d set
            status = u.status, version = u.version::bigint, snapshot = u.snapshot::jsonb,
            received_base_units = u.received_base_units::numeric, deposit_address = u.deposit_address,
            updated_at = u.updated_at::timestamptz
          from ${sql.updateValues(
            [...finals.values()].map((r) => ({
              id: r.id,
              status: r.status,
              version: r.version,
              snapshot: JSON.stringify(r.snapshot),
              received_base_units: r.received_base_units,
              deposit_address: r.deposit_address,
              updated_at: now
            })),
            "u"
          )}
          where d.id = u.id::uuid`
      }
      const written =
        records.lifecycle.length === 0
          ? new Set<string>()
          : new Set(
              (yield* sql<{ id: string }>`
                insert into lifecycle_events ${sql.insert(records.lifecycle)}
                on conflict (deposit_request_id, dedupe) do nothing
                returning id`).map((r) => r.id)
            )
      const outbox = records.outbox
        .filter((o) => o.lifecycleId === null || written.has(o.lifecycleId))
        .map((o) => ({ ...o.row, trace_parent }))
      if (outbox.length > 0) yield* sql`insert into outbox ${sql.insert(outbox)}`
      return { stepped, finals } satisfies Committed
    })

  /**
   * The one commit path of every actor write. For each event: lock the request's row, dedupe by event id,
   * restore, step, and write the snapshot, its queryable columns, the lifecycle events and the outbox rows, all
   * in ONE transaction with a fixed number of statements, whatever the number of events; one request's events are
   * stepped in the order given. `alsoInTransaction` runs in the same transaction after the writes (to write the caller's
   * own rows with them, or fail to roll it all back). Only after the commit does anything act: long polls are
   * woken and the inspector is shown the steps.
   */
  const commit = <E, R>(
    items: ReadonlyArray<ActorEvent>,
    alsoInTransaction?: (committed: Committed) => Effect.Effect<void, E, R>
  ) =>
    // The work left for later (outbox rows) remembers this commit's span, read outside the transaction's own.
    Effect.flatMap(currentTraceParent, (traceParent) =>
      sql.withTransaction(
        Effect.flatMap(writeSteps(items, traceParent), (committed) =>
          alsoInTransaction === undefined
            ? Effect.succeed(committed)
            : Effect.as(alsoInTransaction(committed), committed)
        )
      )
    ).pipe(
      Effect.retry({ while: isWriteConflict, schedule: writeConflictRetry }),
      Effect.withSpan("ActorHost.commit", { attributes: { "deposit_request.events": items.length } }),
      Effect.tap(({ stepped, finals }) =>
        Effect.zipRight(
          Effect.sync(() => {
            for (const s of stepped) {
              inspector.stepped(toId("dr", s.id), s.event, s.step.snapshot)
              metrics.actorSteps.inc({ event: s.event.type })
            }
          }),
          Effect.forEach(finals.values(), (row) => feed.changed(row.id, row.version), { discard: true })
        )
      )
    )

  /**
   * Applies one event to one request through the commit path. `alsoInTransaction` runs only when the event was new; a
   * caller must not wrap `apply` in its own transaction instead, since long polls are woken at this commit.
   */
  const apply = <E extends { readonly _tag: string } = never, R = never>(
    depositRequestId: string,
    eventId: string,
    event: DepositRequestEvent,
    alsoInTransaction?: (applied: {
      readonly row: DepositRequestRow
      readonly step: Step
    }) => Effect.Effect<void, E, R>
  ) => {
    const appliedOf = ({ stepped, finals }: Committed): Applied =>
      stepped[0] === undefined
        ? { _tag: "Duplicate" }
        : { _tag: "Applied", row: finals.get(depositRequestId)!, step: stepped[0].step }
    return Effect.map(
      commit([{ depositRequestId, eventId, event }], (committed) => {
        const applied = appliedOf(committed)
        return alsoInTransaction === undefined || applied._tag === "Duplicate"
          ? Effect.void
          : alsoInTransaction(applied)
      }),
      appliedOf
    )
  }

  /** Applies many events in one commit (a block's credits): how many were new. */
  const applyMany = <E = never, R = never>(
    items: ReadonlyArray<ActorEvent>,
    alsoInTransaction?: Effect.Effect<void, E, R>
  ) =>
    Effect.map(
      commit(items, alsoInTransaction === undefined ? undefined : () => alsoInTransaction),
      ({ stepped }) => stepped.length
    )

  /** The current step of a stored row (restore without an event), for reads. */
  const view = (row: DepositRequestRow) =>
    toWire(
      row,
      lifecycleFactsOf({
        snapshot: row.snapshot,
        status: row.status,
        context: contextOf(row),
        emitted: []
      } as Step),
      chainId,
      baseUrl
    )

  return { firstStep, created, apply, applyMany, view } as const
})

const contextOf = (row: DepositRequestRow): DepositRequestContext =>
  (row.snapshot as { context: DepositRequestContext }).context

export class ActorHost extends Context.Tag("deposits/ActorHost")<
  ActorHost,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(ActorHost, make)
}
