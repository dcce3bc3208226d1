import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Data, Effect, Layer, Schedule } from "effect"
import { MACHINE_VERSION, type Recovery } from "../machines/DepositRequest"
import { v5 as uuidv5 } from "uuid"
import {
  type DepositRequestContext,
  type DepositRequestEvent,
  type DepositRequestInput,
  type Emitted,
  type Step,
  start,
  step
} from "../machines/step"
import { formatAmount } from "./domain/Amount"
import { formatTimestamp } from "./domain/Timestamp"
import { toId } from "./domain/PrefixedId"
import { serviceEnv } from "./Settings"
import { chainIdOf } from "./domain/Environment"
import { type DepositRequestRow, type LifecycleFacts, toWire, webhookSubset } from "./DepositRequestView"
import { ChangeFeed } from "./ChangeFeed"
import { Ids } from "./Ids"
import { Inspector } from "./Inspector"

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

/** The machine's context as the API shows it. One adapter, so the view never reaches into machine internals. */
const str = (v: unknown) => (typeof v === "string" ? v : null)

export const factsOf = (s: Step): LifecycleFacts => {
  const c = s.context as DepositRequestContext & Record<string, unknown>
  const attention = c.attention as LifecycleFacts["attention"] | undefined
  const settlement = c.settlement as
    | { tx_hash?: string | null; block_number?: string | null; settled_at?: string | null }
    | null
    | undefined
  return {
    status: s.status,
    receivedBaseUnits: String(c.received_base_units ?? "0"),
    verificationCompletedAt: str(c.verification_completed_at),
    likelyUnsolicitedAt: str(c.likely_unsolicited_at),
    payerWallet: str(c.payer_wallet),
    address: str(c.address),
    walletBoundAt: str(c.wallet_bound_at),
    attention: attention ?? null,
    settlement:
      s.status === "deposited" || s.status === "settled" || settlement
        ? {
            payoutAddress: String(c.payout_address ?? ""),
            amountBaseUnits: String(c.amount_base_units ?? "0"),
            transactionHash: settlement?.tx_hash ?? null,
            blockNumber: settlement?.block_number ?? null,
            settledAt: settlement?.settled_at ?? null
          }
        : null
  }
}

// Recovery ids are derived from the return's command id, so the same return always has the same `rec_` id.
const RECOVERY_NAMESPACE = "6f1d2c3a-9b8e-4f7a-8c5d-2e1f0a9b8c7d"

/** A recovery ledger entry on the wire: a `rec_` id, decimal and base-unit amounts, second-precision time. */
export const recoveryWire = (r: Recovery) => ({
  id: toId("rec", uuidv5(r.id, RECOVERY_NAMESPACE)) as string,
  amount: formatAmount(BigInt(r.amount_base_units)),
  amount_base_units: r.amount_base_units,
  reason: r.reason,
  transaction_hash: r.transaction_hash,
  block_number: r.block_number,
  recovered_at: formatTimestamp(new Date(r.recovered_at))
})

/** What the caller of `apply` learns. */
export type Applied =
  | { readonly _tag: "Applied"; readonly row: DepositRequestRow; readonly step: Step }
  | { readonly _tag: "Duplicate" }

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const config = { serviceEnv: yield* serviceEnv }
  const feed = yield* ChangeFeed
  const inspector = yield* Inspector
  const chainId = chainIdOf(config.serviceEnv)

  /** Lifecycle events and outbox rows for what a step emitted, in the caller's transaction. */
  const persistEmitted = (row: DepositRequestRow, s: Step, at: Date) =>
    Effect.gen(function* () {
      if (s.emitted.length === 0) return
      const wire = toWire(row, factsOf(s), chainId)
      for (const item of s.emitted as ReadonlyArray<Emitted & Record<string, unknown>>) {
        if (item.kind === "lifecycle") {
          const eventId = ids.next()
          const data: Record<string, unknown> = { deposit_request: webhookSubset(wire) }
          if (item.recovery !== undefined) data.recovery = recoveryWire(item.recovery as Recovery)
          // The exact bytes every delivery of this event sends, fixed now.
          const body = JSON.stringify({
            id: toId("evt", eventId),
            type: item.type,
            occurred_at: formatTimestamp(at),
            data
          })
          const inserted = yield* sql`
            insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
            values (${eventId}, ${row.account_id}, ${row.id}, ${item.type as string}, ${item.dedupe as string}, ${body}, ${at})
            on conflict (deposit_request_id, dedupe) do nothing
            returning id`
          if (inserted.length > 0) {
            yield* sql`
              insert into outbox (topic, deposit_request_id, payload, created_at)
              values ('lifecycle', ${row.id}, ${sql.json({ event_id: eventId })}, ${at})`
          }
        } else {
          yield* sql`
            insert into outbox (topic, deposit_request_id, payload, created_at)
            values (${`command.${item.type as string}`}, ${row.id}, ${sql.json(item)}, ${at})`
        }
      }
    })

  /** The actor's first step and the row that stores it, not yet written. */
  const firstStep = (
    params: Omit<
      DepositRequestRow,
      "status" | "version" | "machine_version" | "snapshot" | "received_base_units" | "updated_at"
    >,
    input: DepositRequestInput
  ) => {
    const s = start(input)
    // Field by field rather than `{ ...params, … }`: properties added after a spread are slow (README: Hot paths).
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
      received_base_units: factsOf(s).receivedBaseUnits,
      updated_at: params.created_at
    }
    return { row, step: s }
  }

  /** To call once a first step's row is committed: shows the new actor to the inspector. */
  const created = (row: DepositRequestRow) => inspector.created(toId("dr", row.id), row.snapshot)

  /** Creates the actor: its first snapshot and whatever the first step emitted, in the caller's transaction. */
  const create = (...args: Parameters<typeof firstStep>) =>
    Effect.gen(function* () {
      const { row, step: s } = firstStep(...args)
      yield* sql`
        insert into deposit_requests (
          id, account_id, status, version, machine_version, snapshot, amount_base_units, received_base_units,
          heading, reference, metadata, customer_id, issuer_id, payout_address_id, payer_policy_mode,
          expected_email, payer_reference, deposit_index, deposit_address, expires_at, created_at, updated_at)
        values (
          ${row.id}, ${row.account_id}, ${row.status}, 1, ${MACHINE_VERSION}, ${sql.json(s.snapshot)},
          ${row.amount_base_units}, ${row.received_base_units}, ${row.heading}, ${row.reference},
          ${sql.json(row.metadata)}, ${row.customer_id}, ${row.issuer_id}, ${row.payout_address_id},
          ${row.payer_policy_mode}, ${row.expected_email}, ${row.payer_reference}, ${row.deposit_index},
          ${row.deposit_address}, ${row.expires_at}, ${row.created_at}, ${row.created_at})`
      yield* persistEmitted(row, s, row.created_at)
      created(row)
      return { row, step: s }
    })

  /**
   * Applies one event to one request: dedupe by event id, lock the row (one writer per request), restore, step,
   * and commit the snapshot, its queryable columns, the lifecycle events and the outbox rows in ONE transaction.
   * Only after the commit does anything act on it. `within`, when given, runs in the same transaction after the
   * step is written (to write the caller's own rows with it, or fail to roll it all back); a caller must not wrap
   * `apply` in its own transaction instead, since long polls are woken at this commit.
   */
  const apply = <E extends { readonly _tag: string } = never, R = never>(
    depositRequestId: string,
    eventId: string,
    event: DepositRequestEvent,
    within?: (applied: { readonly row: DepositRequestRow; readonly step: Step }) => Effect.Effect<void, E, R>
  ) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          const now = new Date(yield* Clock.currentTimeMillis)
          // Lock the row first: one writer per request. (Inserting the dedupe record first would take a key-share
          // lock through its foreign key, and two writers upgrading it would deadlock.)
          const rows = yield* sql<DepositRequestRow>`
            select * from deposit_requests where id = ${depositRequestId} for update`
          if (rows[0] === undefined) return yield* new DepositRequestMissing({ id: depositRequestId })
          const fresh = yield* sql`
            insert into applied_events (deposit_request_id, event_id, applied_at)
            values (${depositRequestId}, ${eventId}, ${now})
            on conflict do nothing
            returning event_id`
          if (fresh.length === 0) return { _tag: "Duplicate" } as Applied
          const current = rows[0]!
          if (current.machine_version !== MACHINE_VERSION) {
            return yield* new SnapshotVersionError({
              depositRequestId,
              found: current.machine_version,
              expected: MACHINE_VERSION
            })
          }
          const s = step(current.snapshot, event)
          const facts = factsOf(s)
          const version = (BigInt(current.version) + 1n).toString()
          const row: DepositRequestRow = {
            ...current,
            status: s.status,
            version,
            snapshot: s.snapshot,
            received_base_units: facts.receivedBaseUnits,
            deposit_address: facts.address ?? current.deposit_address,
            updated_at: now
          }
          yield* sql`
            update deposit_requests set
              status = ${row.status}, version = ${version}, snapshot = ${sql.json(s.snapshot)},
              received_base_units = ${row.received_base_units}, deposit_address = ${row.deposit_address},
              updated_at = ${now}
            where id = ${depositRequestId}`
          yield* persistEmitted(row, s, now)
          if (within !== undefined) yield* within({ row, step: s })
          return { _tag: "Applied", row, step: s } as Applied
        })
      )
      .pipe(
        // Two writers of one row serialize on the row lock; a serialization failure or deadlock is retried.
        Effect.retry({
          while: (e) =>
            e._tag === "SqlError" &&
            /deadlock|could not serialize/i.test(String((e as { readonly cause?: unknown }).cause)),
          schedule: Schedule.exponential("10 millis").pipe(Schedule.intersect(Schedule.recurs(5)))
        }),
        // Only after the commit: wake long polls everywhere and show the step to the inspector.
        Effect.tap((result) =>
          result._tag === "Applied"
            ? Effect.zipRight(
                Effect.sync(() =>
                  inspector.stepped(toId("dr", depositRequestId), event, result.step.snapshot)
                ),
                feed.changed(depositRequestId, result.row.version)
              )
            : Effect.void
        )
      )

  /**
   * The batch form of `apply`, for the chain watcher (a block carries hundreds of credits): every event in ONE
   * transaction with a fixed number of statements, whatever the batch size. The same guarantees per event as
   * `apply`: the rows are locked (in id order, so two batches cannot deadlock), each event is deduped by its id,
   * and the snapshots, lifecycle events and outbox rows commit together; the events of one request are stepped
   * in the order given. `within` runs in the same transaction after the writes.
   */
  const applyMany = <E = never, R = never>(
    items: ReadonlyArray<{
      readonly depositRequestId: string
      readonly eventId: string
      readonly event: DepositRequestEvent
    }>,
    within?: Effect.Effect<void, E, R>
  ) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          const now = new Date(yield* Clock.currentTimeMillis)
          const stepped: Array<{
            readonly id: string
            readonly event: DepositRequestEvent
            readonly step: Step
          }> = []
          const finals = new Map<string, DepositRequestRow>()
          if (items.length > 0) {
            const requestIds = [...new Set(items.map((i) => i.depositRequestId))].sort()
            const rows = yield* sql<DepositRequestRow>`
              select * from deposit_requests where id in ${sql.in(requestIds)} order by id for update`
            const current = new Map(rows.map((r) => [r.id, r]))
            const missing = requestIds.find((id) => !current.has(id))
            if (missing !== undefined) return yield* new DepositRequestMissing({ id: missing })
            const fresh = yield* sql<{ deposit_request_id: string; event_id: string }>`
              insert into applied_events ${sql.insert(
                items.map((i) => ({
                  deposit_request_id: i.depositRequestId,
                  event_id: i.eventId,
                  applied_at: now
                }))
              )}
              on conflict do nothing
              returning deposit_request_id, event_id`
            const unseen = new Set(fresh.map((f) => `${f.deposit_request_id} ${f.event_id}`))
            const lifecycle: Array<Record<string, unknown>> = []
            // In emission order; a lifecycle event's row is kept only if the event itself is written.
            const outbox: Array<{
              readonly lifecycleId: string | null
              readonly row: Record<string, unknown>
            }> = []
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
              const s = step(before.snapshot, item.event)
              const facts = factsOf(s)
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
              if (s.emitted.length === 0) continue
              const wire = toWire(row, facts, chainId)
              for (const emitted of s.emitted as ReadonlyArray<Emitted & Record<string, unknown>>) {
                if (emitted.kind === "lifecycle") {
                  const eventId = ids.next()
                  const data: Record<string, unknown> = { deposit_request: webhookSubset(wire) }
                  if (emitted.recovery !== undefined)
                    data.recovery = recoveryWire(emitted.recovery as Recovery)
                  lifecycle.push({
                    id: eventId,
                    account_id: row.account_id,
                    deposit_request_id: row.id,
                    type: emitted.type as string,
                    dedupe: emitted.dedupe as string,
                    body: JSON.stringify({
                      id: toId("evt", eventId),
                      type: emitted.type,
                      occurred_at: formatTimestamp(now),
                      data
                    }),
                    occurred_at: now
                  })
                  outbox.push({
                    lifecycleId: eventId,
                    row: {
                      topic: "lifecycle",
                      deposit_request_id: row.id,
                      payload: JSON.stringify({ event_id: eventId }),
                      created_at: now
                    }
                  })
                } else {
                  outbox.push({
                    lifecycleId: null,
                    row: {
                      topic: `command.${emitted.type as string}`,
                      deposit_request_id: row.id,
                      payload: JSON.stringify(emitted),
                      created_at: now
                    }
                  })
                }
              }
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
              lifecycle.length === 0
                ? new Set<string>()
                : new Set(
                    (yield* sql<{ id: string }>`
                      insert into lifecycle_events ${sql.insert(lifecycle)}
                      on conflict (deposit_request_id, dedupe) do nothing
                      returning id`).map((r) => r.id)
                  )
            const rowsOut = outbox
              .filter((o) => o.lifecycleId === null || written.has(o.lifecycleId))
              .map((o) => o.row)
            if (rowsOut.length > 0) yield* sql`insert into outbox ${sql.insert(rowsOut)}`
          }
          if (within !== undefined) yield* within
          return { stepped, finals }
        })
      )
      .pipe(
        Effect.retry({
          while: (e) =>
            (e as { readonly _tag?: string })._tag === "SqlError" &&
            /deadlock|could not serialize/i.test(String((e as { readonly cause?: unknown }).cause)),
          schedule: Schedule.exponential("10 millis").pipe(Schedule.intersect(Schedule.recurs(5)))
        }),
        // Only after the commit: wake long polls and show the steps to the inspector.
        Effect.tap(({ stepped, finals }) =>
          Effect.zipRight(
            Effect.sync(() => {
              for (const s of stepped) inspector.stepped(toId("dr", s.id), s.event, s.step.snapshot)
            }),
            Effect.forEach(finals.values(), (row) => feed.changed(row.id, row.version), { discard: true })
          )
        ),
        Effect.map(({ stepped }) => stepped.length)
      )

  /** The current step of a stored row (restore without an event), for reads. */
  const view = (row: DepositRequestRow) =>
    toWire(
      row,
      factsOf({ snapshot: row.snapshot, status: row.status, context: contextOf(row), emitted: [] } as Step),
      chainId
    )

  return { firstStep, created, create, apply, applyMany, view } as const
})

const contextOf = (row: DepositRequestRow): DepositRequestContext =>
  (row.snapshot as { context: DepositRequestContext }).context

export class ActorHost extends Context.Tag("deposits/ActorHost")<
  ActorHost,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(ActorHost, make)
}
