import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Cause, Clock, Context, Data, Effect, Exit, Layer, Option, Schedule, type Tracer } from "effect"
import { MACHINE_VERSION } from "../../machines/DepositRequest"
import {
  type DepositRequestContext,
  type DepositRequestEvent,
  type DepositRequestInput,
  type Step,
  start,
  step
} from "../../machines/step"
import { toId } from "../domain/PrefixedId"
import { publicBaseUrl, serviceEnv } from "../platform/Settings"
import { chainIdOf } from "../domain/Environment"
import { type DepositRequestRow, lifecycleFactsOf, toWire } from "../depositRequests/DepositRequestWire"
import { addRecords, emptyRecords } from "./CommitRows"
import { makeBatcher } from "../platform/Batcher"
import { ChangeFeed } from "../platform/ChangeFeed"
import { Ids } from "../platform/Ids"
import { Inspector } from "./StepInspector"
import { Metrics } from "../platform/Metrics"
import {
  currentFiber,
  currentTraceParent,
  startSpan,
  traceParentOf,
  withHandSpan
} from "../platform/TraceContext"

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

/** What one step of a commit made: the request's row after it, and the step. */
interface Stepped {
  readonly row: DepositRequestRow
  readonly step: Step
}

/**
 * One caller's share of a commit: its events (stepped in the order given), the statements it runs in the same
 * transaction (its context already provided; given each event's outcome, `undefined` for a duplicate), and the
 * span its outbox rows link back to.
 */
interface Member {
  readonly items: ReadonlyArray<ActorEvent>
  readonly also: ((outcomes: ReadonlyArray<Stepped | undefined>) => Effect.Effect<void, unknown>) | undefined
  readonly traceParent: string | null
  /** The caller's commit span, the parent of its steps' spans (the commit may run on another fiber). */
  readonly span: Tracer.AnySpan | undefined
}

/** A row of `apply_actor_steps_v2`'s answer: why it wrote nothing (no rows: it wrote everything). */
interface Problem {
  readonly kind: "missing" | "stale" | "seen"
  readonly deposit_request_id: string
  readonly event_id: string | null
}

/** Two writers of one row serialize on its lock; a deadlock or serialization failure is tried again. */
const isWriteConflict = (e: unknown) =>
  (e as { readonly _tag?: string })._tag === "SqlError" &&
  /deadlock|could not serialize/i.test(String((e as { readonly cause?: unknown }).cause))
const writeConflictRetry = Schedule.exponential("10 millis").pipe(Schedule.intersect(Schedule.recurs(5)))

/**
 * Snapshots of the requests this instance stepped last, by id. An entry is only a guess: every write names the
 * version it was stepped from and `apply_actor_steps_v2` refuses it when the row moved on (another instance, the
 * merchant's update), so a stale entry costs a read and a second try, never a lost update.
 *
 * Sized to hold every open request at the production scale the watcher is built for (100,000 watched addresses):
 * ~1.7 KB of heap each (measured), ~170 MB when full. A request is paid minutes after its wallet is attested, so
 * at chain pace a smaller memory has forgotten it by then and every such commit reads rows first (README: Decisions).
 */
const REMEMBERED_ACTORS = 100_000
/**
 * Concurrent `apply` calls share commits: one commit under way at a time, and calls arriving meanwhile join the
 * next one (up to `MAX_GROUP`), so this instance never races itself on a row and one request's events commit in
 * the order they were applied. Measured with 8 writers: one queue made groups of ~8 and 2.4× the events per
 * second of four queues by request id (groups of ~2); a second commit under way made smaller groups and no more.
 */
const MAX_GROUP = 64
const ONE_EVENT = { "deposit_request.events": 1 }
/** Optimistic tries without a transaction before the rows are locked and read (writers racing on one row). */
const OPTIMISTIC_TRIES = 2
/** Under the row locks a write succeeds by the second or third call (stale rows re-read, seen events dropped). */
const LOCKED_TRIES = 4

/** SQLSTATE classes of a failing server or connection: a group's failure then is nobody's input. */
const systemicClasses = new Set(["08", "53", "57", "58"])
const mayBeOneMembers = (cause: Cause.Cause<unknown>) =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => true,
    onSome: (error) => {
      if ((error as { readonly _tag?: string })._tag !== "SqlError") return true
      const code = ((error as { readonly cause?: unknown }).cause as { readonly code?: unknown } | undefined)
        ?.code
      return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !systemicClasses.has(code.slice(0, 2))
    }
  })

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const feed = yield* ChangeFeed
  const inspector = yield* Inspector
  const metrics = yield* Metrics
  const chainId = chainIdOf(yield* serviceEnv)
  const baseUrl = yield* publicBaseUrl
  const newId = () => ids.next()

  /** Map order is insertion order: re-inserting on use keeps the least recently used first, to drop first. */
  const remembered = new Map<string, DepositRequestRow>()
  const remember = (row: DepositRequestRow) => {
    const held = remembered.get(row.id)
    if (held !== undefined) {
      // An older commit finishing late must not replace a newer row.
      if (BigInt(held.version) > BigInt(row.version)) return
      remembered.delete(row.id)
    }
    remembered.set(row.id, row)
    if (remembered.size > REMEMBERED_ACTORS) remembered.delete(remembered.keys().next().value!)
  }

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

  /** To call once a first step's row is committed: shows the new actor to the inspector (and remembers it). */
  const created = (row: DepositRequestRow) => {
    remember(row)
    return inspector.created(toId("dr", row.id), row.snapshot)
  }

  /**
   * Steps every event not known to be applied, from the rows in `known`, and builds what `apply_actor_steps_v2`
   * writes. Nothing is written.
   */
  const plan = (
    members: ReadonlyArray<Member>,
    known: ReadonlyMap<string, DepositRequestRow>,
    seen: ReadonlySet<string>,
    now: Date
  ) =>
    Effect.gen(function* () {
      const fiber = yield* currentFiber
      const outcomes = members.map((m) => m.items.map((): Stepped | undefined => undefined))
      const current = new Map<string, DepositRequestRow>()
      const inBatch = new Set<string>()
      const events: Array<{ deposit_request_id: string; event_id: string }> = []
      const stepped: Array<{
        readonly id: string
        readonly event: DepositRequestEvent
        readonly step: Step
      }> = []
      const records = emptyRecords()
      for (let m = 0; m < members.length; m++) {
        const member = members[m]!
        for (let i = 0; i < member.items.length; i++) {
          const item = member.items[i]!
          const key = `${item.depositRequestId} ${item.eventId}`
          // An event twice in one commit, or already applied, has no second effect.
          if (seen.has(key) || inBatch.has(key)) continue
          inBatch.add(key)
          const before = current.get(item.depositRequestId) ?? known.get(item.depositRequestId)!
          if (before.machine_version !== MACHINE_VERSION) {
            return yield* new SnapshotVersionError({
              depositRequestId: before.id,
              found: before.machine_version,
              expected: MACHINE_VERSION
            })
          }
          const stepSpan = startSpan(fiber, "DepositRequest.step", member.span ?? fiber.currentSpan, {
            "deposit_request.id": toId("dr", before.id),
            "event.type": item.event.type
          })
          let s: Step
          try {
            s = step(before.snapshot, item.event)
          } catch (defect) {
            stepSpan?.end(Exit.die(defect))
            throw defect
          }
          stepSpan?.end(Exit.void)
          const facts = lifecycleFactsOf(s)
          // Field by field rather than a spread: properties added after a spread are slow (README: Decisions).
          const row: DepositRequestRow = {
            id: before.id,
            account_id: before.account_id,
            status: s.status,
            version: (BigInt(before.version) + 1n).toString(),
            machine_version: before.machine_version,
            snapshot: s.snapshot,
            amount_base_units: before.amount_base_units,
            received_base_units: facts.receivedBaseUnits,
            heading: before.heading,
            reference: before.reference,
            metadata: before.metadata,
            customer_id: before.customer_id,
            issuer_id: before.issuer_id,
            payout_address_id: before.payout_address_id,
            payer_policy_mode: before.payer_policy_mode,
            expected_email: before.expected_email,
            payer_reference: before.payer_reference,
            deposit_index: before.deposit_index,
            deposit_address: facts.address ?? before.deposit_address,
            expires_at: before.expires_at,
            created_at: before.created_at,
            updated_at: now
          }
          current.set(row.id, row)
          outcomes[m]![i] = { row, step: s }
          stepped.push({ id: row.id, event: item.event, step: s })
          events.push({ deposit_request_id: row.id, event_id: item.eventId })
          addRecords(records, row, s, now, newId, chainId, baseUrl, member.traceParent)
        }
      }
      // `apply_actor_steps_v2`'s input: what the database cannot derive, every row stamped with the one `at`.
      const statement =
        events.length === 0
          ? undefined
          : JSON.stringify({
              at: now,
              requests: [...current.values()].map((r) => ({
                id: r.id,
                expected_version: known.get(r.id)!.version,
                version: r.version,
                status: r.status,
                snapshot: r.snapshot,
                received_base_units: r.received_base_units,
                deposit_address: r.deposit_address
              })),
              events,
              lifecycle: records.lifecycle,
              commands: records.commands
            })
      return { outcomes, stepped, finals: current, statement }
    })

  type Plan = Effect.Effect.Success<ReturnType<typeof plan>>

  /**
   * One try: read the rows not known, step, and send it all in one statement. `undefined` when the statement
   * refused a stale row or a seen event: `known` and `seen` have learnt why, and the next try steps again.
   */
  const tryOnce = (
    members: ReadonlyArray<Member>,
    requestIds: ReadonlyArray<string>,
    known: Map<string, DepositRequestRow>,
    seen: Set<string>
  ) =>
    Effect.gen(function* () {
      const unknown = requestIds.filter((id) => !known.has(id))
      if (unknown.length > 0) {
        const rows =
          yield* sql<DepositRequestRow>`select * from deposit_requests where id in ${sql.in(unknown)}`
        for (const r of rows) known.set(r.id, r)
        const missing = unknown.find((id) => !known.has(id))
        if (missing !== undefined) return yield* new DepositRequestMissing({ id: missing })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const planned = yield* plan(members, known, seen, now)
      if (planned.statement === undefined) return planned
      const problems = yield* sql<Problem>`
        select kind, deposit_request_id, event_id from apply_actor_steps_v2(${planned.statement}::jsonb)`
      if (problems.length === 0) return planned
      for (const p of problems) {
        if (p.kind === "missing") return yield* new DepositRequestMissing({ id: p.deposit_request_id })
        if (p.kind === "seen") seen.add(`${p.deposit_request_id} ${p.event_id}`)
        else {
          known.delete(p.deposit_request_id)
          remembered.delete(p.deposit_request_id)
        }
      }
      return undefined
    })

  /** Tries until a try writes; the last is refused only if something is broken (rows locked by then). */
  const tryUpTo = (
    tries: number,
    members: ReadonlyArray<Member>,
    requestIds: ReadonlyArray<string>,
    known: Map<string, DepositRequestRow>,
    seen: Set<string>
  ): Effect.Effect<Plan | undefined, unknown> =>
    tries === 0
      ? Effect.succeed(undefined)
      : Effect.flatMap(tryOnce(members, requestIds, known, seen), (planned) =>
          planned === undefined
            ? tryUpTo(tries - 1, members, requestIds, known, seen)
            : Effect.succeed(planned)
        )

  /**
   * The one commit path of every actor write. The events of all members are stepped from the snapshots held in
   * memory (or read), in the order given, and `apply_actor_steps_v2` writes them in one statement: it locks the rows,
   * checks that each is still the version stepped from and that no event was applied already (dedupe by event
   * id), and writes the snapshots, the dedupe records, the lifecycle events and the outbox rows together. Without
   * members' own statements that statement is its own transaction (one round trip); with them, or after a refused
   * try, a transaction holds the row locks while the rows are read and stepped again, and the members' statements
   * run in it after the writes (to write their own rows with them, or fail to roll it all back). Only after the
   * commit does anything act: long polls are woken and the inspector is shown the steps.
   */
  const commit = (members: ReadonlyArray<Member>) =>
    Effect.gen(function* () {
      const requestIds = [...new Set(members.flatMap((m) => m.items.map((i) => i.depositRequestId)))].sort()
      const known = new Map<string, DepositRequestRow>()
      for (const id of requestIds) {
        const row = remembered.get(id)
        if (row !== undefined) known.set(id, row)
      }
      const seen = new Set<string>()
      const callerStatements = members.some((m) => m.also !== undefined)
      let planned: Plan | undefined
      if (!callerStatements) {
        planned = yield* tryUpTo(OPTIMISTIC_TRIES, members, requestIds, known, seen).pipe(
          Effect.retry({ while: isWriteConflict, schedule: writeConflictRetry })
        )
      }
      if (planned === undefined) {
        planned = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const locked = yield* tryUpTo(LOCKED_TRIES, members, requestIds, known, seen)
              if (locked === undefined)
                return yield* Effect.dieMessage("actor rows kept changing under their locks")
              for (let m = 0; m < members.length; m++) {
                const also = members[m]!.also
                if (also !== undefined) yield* also(locked.outcomes[m]!)
              }
              return locked
            })
          )
          .pipe(Effect.retry({ while: isWriteConflict, schedule: writeConflictRetry }))
      }
      const committed = planned
      // A member's own statements may have changed its rows beyond what the step wrote: read them next time.
      const touched = new Set(
        members.flatMap((m) => (m.also === undefined ? [] : m.items.map((i) => i.depositRequestId)))
      )
      for (const row of committed.finals.values()) {
        if (touched.has(row.id)) remembered.delete(row.id)
        else remember(row)
      }
      for (const s of committed.stepped) {
        inspector.stepped(toId("dr", s.id), s.event, s.step.snapshot)
        metrics.actorSteps.inc({ event: s.event.type })
      }
      yield* Effect.forEach(committed.finals.values(), (row) => feed.changed(row.id, row.version), {
        discard: true
      })
      return committed.outcomes
    })

  /** Concurrent single events share commits; a member whose input or statements fail fails alone (README). */
  const group = makeBatcher<Member, Stepped | undefined, unknown>({
    maxBatch: MAX_GROUP,
    maxInFlight: 1,
    run: (_queue, members) =>
      Effect.map(commit(members), (outcomes) => outcomes.map((o) => o[0])).pipe(
        Effect.withSpan("ActorHost.sharedCommit", {
          attributes: { "actor_host.members": members.length },
          captureStackTrace: false
        })
      ),
    isolate: mayBeOneMembers
  })

  /** The caller's context, for statements run by a commit on another fiber (never its transaction, if any). */
  const callerContext = <R>() =>
    Effect.map(Effect.context<R>(), (context) =>
      Context.omit(SqlClient.TransactionConnection)(
        context as Context.Context<R | SqlClient.TransactionConnection>
      )
    )

  /**
   * Applies one event to one request through the commit path, sharing the commit with concurrent calls.
   * `alsoInTransaction` runs only when the event was new; a caller must not wrap `apply` in its own transaction
   * instead, since long polls are woken at this commit.
   */
  const apply = <E extends { readonly _tag: string } = never, R = never>(
    depositRequestId: string,
    eventId: string,
    event: DepositRequestEvent,
    alsoInTransaction?: (applied: {
      readonly row: DepositRequestRow
      readonly step: Step
    }) => Effect.Effect<void, E, R>
  ): Effect.Effect<Applied, E | SqlError | DepositRequestMissing | SnapshotVersionError, R> =>
    // The caller's span of this commit, made by hand (one per event: README, Decisions); the work the commit leaves
    // for later (outbox rows) links back to it.
    withHandSpan("ActorHost.commit", ONE_EVENT, (commitSpan) => {
      const submit = (context: unknown) =>
        group.submit("apply", {
          items: [{ depositRequestId, eventId, event }],
          also:
            alsoInTransaction === undefined
              ? undefined
              : ([stepped]) => {
                  if (stepped === undefined) return Effect.void
                  const also = alsoInTransaction(stepped)
                  return Effect.provide(
                    commitSpan === undefined ? also : Effect.withParentSpan(also, commitSpan),
                    context as Context.Context<R>
                  )
                },
          traceParent: commitSpan === undefined ? null : traceParentOf(commitSpan),
          span: commitSpan
        })
      return Effect.map(
        alsoInTransaction === undefined ? submit(undefined) : Effect.flatMap(callerContext<R>(), submit),
        (outcome): Applied =>
          outcome === undefined
            ? { _tag: "Duplicate" }
            : { _tag: "Applied", row: outcome.row, step: outcome.step }
      )
    }) as Effect.Effect<Applied, E | SqlError | DepositRequestMissing | SnapshotVersionError, R>

  /** Applies many events in one commit (a block's credits): how many were new. */
  const applyMany = <E = never, R = never>(
    items: ReadonlyArray<ActorEvent>,
    alsoInTransaction?: Effect.Effect<void, E, R>
  ): Effect.Effect<number, E | SqlError | DepositRequestMissing | SnapshotVersionError, R> =>
    Effect.gen(function* () {
      const traceParent = yield* currentTraceParent
      const span = Option.getOrUndefined(yield* Effect.option(Effect.currentSpan))
      const context = yield* callerContext<R>()
      const [outcomes] = yield* commit([
        {
          items,
          also:
            alsoInTransaction === undefined
              ? undefined
              : () => Effect.provide(alsoInTransaction, context as Context.Context<R>),
          traceParent,
          span
        }
      ])
      return outcomes!.filter((o) => o !== undefined).length
    }).pipe(
      Effect.withSpan("ActorHost.commit", {
        attributes: { "deposit_request.events": items.length },
        captureStackTrace: false
      })
    ) as Effect.Effect<number, E | SqlError | DepositRequestMissing | SnapshotVersionError, R>

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
