import type { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Schedule } from "effect"
import { DepositRequestMissing, type SnapshotVersionError } from "./ActorErrors"
import type { ActorMemory } from "./ActorMemory"
import { type DepositRequestRow, depositRequestColumns } from "./ActorRow"
import type { Member, Plan } from "./CommitPlan"
import { isWriteConflict } from "../platform/SqlFailure"

/** A row of `apply_actor_steps_v3`'s answer: why it wrote nothing (no rows: it wrote everything). */
interface Problem {
  readonly kind: "missing" | "stale" | "seen"
  readonly deposit_request_id: string
  readonly event_id: string | null
}

/** Two writers of one row serialize on its lock; a deadlock or serialization failure is tried again. */
/**
 * Five more tries after pauses of 10, 20, 40, 80 and 160 ms. The schedule is driven only once a try met a
 * conflict: a commit seldom does, and every commit would otherwise pay for its driver.
 */
const afterFirstConflict = Schedule.exponential("20 millis").pipe(Schedule.intersect(Schedule.recurs(4)))
export const retryWriteConflicts = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, isWriteConflict, () =>
    Effect.zipRight(
      Effect.sleep("10 millis"),
      Effect.retry(effect, { while: isWriteConflict, schedule: afterFirstConflict })
    )
  )

const columnList = depositRequestColumns.join(", ")

/** Optimistic tries without a transaction before the rows are locked and read (writers racing on one row). */
export const OPTIMISTIC_TRIES = 2
/** Under the row locks a write succeeds by the second or third call (stale rows re-read, seen events dropped). */
export const LOCKED_TRIES = 4

/** Plans a commit from the rows known and the events seen, at the given instant. */
export type Planner = (
  members: ReadonlyArray<Member>,
  known: ReadonlyMap<string, DepositRequestRow>,
  seen: ReadonlySet<string>,
  now: Date
) => Effect.Effect<Plan, SnapshotVersionError>

/**
 * The statement of a commit and its tries. One try reads the rows not known, plans, and sends it all in one
 * statement; when the statement refuses a stale row or a seen event, `known`, `seen` and the memory learn why and
 * the next try plans again.
 */
export const makeActorStatement = (sql: PgClient.PgClient, memory: ActorMemory, planner: Planner) => {
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
          yield* sql<DepositRequestRow>`select ${sql.literal(columnList)} from deposit_requests where id in ${sql.in(unknown)}`
        for (const r of rows) known.set(r.id, r)
        const missing = unknown.find((id) => !known.has(id))
        if (missing !== undefined) return yield* new DepositRequestMissing({ id: missing })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const planned = yield* planner(members, known, seen, now)
      if (planned.statement === undefined) return planned
      const problems = yield* sql<Problem>`
        select kind, deposit_request_id, event_id from apply_actor_steps_v3(${planned.statement}::jsonb)`
      if (problems.length === 0) return planned
      for (const p of problems) {
        if (p.kind === "missing") return yield* new DepositRequestMissing({ id: p.deposit_request_id })
        if (p.kind === "seen") seen.add(`${p.deposit_request_id} ${p.event_id}`)
        else {
          known.delete(p.deposit_request_id)
          memory.forget(p.deposit_request_id)
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
   * Writes the members' events: optimistic tries first, each its own transaction (one round trip), unless a member
   * brings statements of its own; then, or after refused tries, a transaction holds the row locks while the rows
   * are read and stepped again, and the members' statements run in it after the writes (to write their own rows
   * with them, or fail to roll it all back).
   */
  const write = (members: ReadonlyArray<Member>, requestIds: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const known = new Map<string, DepositRequestRow>()
      for (const id of requestIds) {
        const row = memory.get(id)
        if (row !== undefined) known.set(id, row)
      }
      const seen = new Set<string>()
      if (!members.some((m) => m.also !== undefined)) {
        const planned = yield* retryWriteConflicts(
          tryUpTo(OPTIMISTIC_TRIES, members, requestIds, known, seen)
        )
        if (planned !== undefined) return planned
      }
      return yield* sql
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
        .pipe(retryWriteConflicts)
    })

  return { write } as const
}
