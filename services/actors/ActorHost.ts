import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, type Fiber, FiberRef, Option } from "effect"
import { type DepositRequestEvent, type Step, step } from "../../machines/step"
import { toId } from "../domain/PrefixedId"
import { makeBatcher } from "../platform/Batcher"
import { ChangeFeed } from "../platform/ChangeFeed"
import { Instance } from "../platform/Instance"
import { Metrics } from "../platform/Metrics"
import { mayBeOneCallers } from "../platform/SqlFailure"
import { currentFiber, currentTraceParent, startSpan, traceParentOf } from "../platform/TraceContext"
import { type DepositRequestMissing, SnapshotVersionError } from "./ActorErrors"
import { makeActorMemory } from "./ActorMemory"
import type { DepositRequestRow } from "./ActorRow"
import { makeActorStatement } from "./ActorStatement"
import { type ActorEvent, type Member, type Plan, planCommit, type Stepped } from "./CommitPlan"
import { LifecycleBodies } from "./LifecycleBodies"
import { LifecycleLog } from "./LifecycleLog"
import { Inspector } from "./StepInspector"
import { stepHistoryDays } from "./StepHistorySettings"

export { DepositRequestMissing, SnapshotVersionError } from "./ActorErrors"
export type { ActorEvent } from "./CommitPlan"

/** What the caller of `apply` learns. */
export type Applied =
  | { readonly _tag: "Applied"; readonly row: DepositRequestRow; readonly step: Step }
  | { readonly _tag: "Duplicate" }

const DUPLICATE: Applied = { _tag: "Duplicate" }
const appliedOf = (outcome: Stepped | undefined): Applied =>
  outcome === undefined ? DUPLICATE : { _tag: "Applied", row: outcome.row, step: outcome.step }

/**
 * Concurrent `apply` calls share commits: one commit under way at a time, and calls arriving meanwhile join the
 * next one (up to `MAX_GROUP`), so this instance never races itself on a row and one request's events commit in
 * the order they were applied. One queue makes larger groups than a queue per request, and a second commit under
 * way made smaller groups and no more events per second.
 */
const MAX_GROUP = 64
const ONE_EVENT = { "deposit_request.events": 1 }

/** The caller's context, for statements run by a commit on another fiber (never its transaction, if any). */
const callerContext = <R>() =>
  Effect.map(Effect.context<R>(), (context) =>
    Context.omit(SqlClient.TransactionConnection)(
      context as Context.Context<R | SqlClient.TransactionConnection>
    )
  )

type ApplyError<E> = E | SqlError | DepositRequestMissing | SnapshotVersionError

/** Applies one event to one request; `alsoInTransaction` runs in the commit's transaction only when it was new. */
export type Apply = <E extends { readonly _tag: string } = never, R = never>(
  depositRequestId: string,
  eventId: string,
  event: DepositRequestEvent,
  alsoInTransaction?: (applied: {
    readonly row: DepositRequestRow
    readonly step: Step
  }) => Effect.Effect<void, E, R>
) => Effect.Effect<Applied, ApplyError<E>, R>

/** Applies many events in one commit (a block's credits): how many were new. */
export type ApplyMany = <E = never, R = never>(
  items: ReadonlyArray<ActorEvent>,
  alsoInTransaction?: Effect.Effect<void, E, R>
) => Effect.Effect<number, ApplyError<E>, R>

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const feed = yield* ChangeFeed
  const inspector = yield* Inspector
  const metrics = yield* Metrics
  const bodies = yield* LifecycleBodies
  const instance = (yield* Instance).id
  const history = (yield* stepHistoryDays) > 0
  // Optional: the sandbox's start provides it; elsewhere nothing is formatted or written.
  const lifecycleLog = Option.getOrUndefined(yield* Effect.serviceOption(LifecycleLog))
  const memory = makeActorMemory()

  // Each step's span is made by hand, under the caller's commit span (one per event: README, Decisions).
  const statement = makeActorStatement(sql, memory, (members, known, seen, now) =>
    Effect.flatMap(currentFiber, (fiber) => {
      // Read once per commit: with tracing off a step makes no span, nor the attributes one would carry.
      const tracing = fiber.getFiberRef(FiberRef.currentTracerEnabled)
      const planned = planCommit(members, known, seen, {
        now,
        bodies,
        history,
        instance,
        step: (before, item, member) => {
          if (!tracing) return step(before.snapshot, item.event)
          const span = startSpan(fiber, "DepositRequest.step", member.span ?? fiber.currentSpan, {
            "deposit_request.id": toId("dr", before.id),
            "event.type": item.event.type
          })
          let s: Step
          try {
            s = step(before.snapshot, item.event)
          } catch (defect) {
            span?.end(Exit.die(defect))
            throw defect
          }
          span?.end(Exit.void)
          return s
        }
      })
      return planned instanceof SnapshotVersionError ? Effect.fail(planned) : Effect.succeed<Plan>(planned)
    })
  )

  /**
   * The one commit path of every actor write: the members' events are stepped from the rows held in memory (or
   * read), in the order given, and written in one statement (see `makeActorStatement`). Only after the commit does
   * anything act: the memory keeps the rows, long polls are woken and the inspector is shown the steps.
   */
  const commit = (members: ReadonlyArray<Member>) =>
    Effect.gen(function* () {
      const requestIds = [...new Set(members.flatMap((m) => m.items.map((i) => i.depositRequestId)))].sort()
      const committed = yield* statement.write(members, requestIds)
      // A member's own statements may have changed its rows beyond what the step wrote: read them next time.
      const touched = new Set(
        members.flatMap((m) => (m.also === undefined ? [] : m.items.map((i) => i.depositRequestId)))
      )
      for (const row of committed.finals.values()) {
        if (touched.has(row.id)) memory.forget(row.id)
        else memory.remember(row)
      }
      // Counted once per event type in the commit: the counter hashes its labels on every call.
      const steps = new Map<string, number>()
      for (const s of committed.stepped) {
        inspector.stepped(toId("dr", s.id), s.event, s.step.snapshot)
        steps.set(s.event.type, (steps.get(s.event.type) ?? 0) + 1)
      }
      for (const [event, n] of steps) metrics.actorSteps.inc({ event }, n)
      if (lifecycleLog !== undefined) yield* lifecycleLog.stepped(committed.stepped)
      yield* feed.changedRows(committed.finals.values())
      return committed.outcomes
    })

  /** Concurrent single events share commits; a member whose input or statements fail fails alone (README). */
  const group = makeBatcher<Member, Applied, unknown>({
    maxBatch: MAX_GROUP,
    maxInFlight: 1,
    run: (_queue, members) => {
      const shared = Effect.map(commit(members), (outcomes) => outcomes.map((o) => appliedOf(o[0])))
      // With tracing off the span would be a no-op one, and making it still copies the fiber's context.
      return Effect.withFiberRuntime((fiber) =>
        fiber.getFiberRef(FiberRef.currentTracerEnabled)
          ? Effect.withSpan(shared, "ActorHost.sharedCommit", {
              attributes: { "actor_host.members": members.length },
              captureStackTrace: false
            })
          : shared
      )
    },
    // A failing server or connection (a systemic SQLSTATE) is nobody's input: the group fails at once.
    isolate: mayBeOneCallers
  })

  /**
   * Applies one event through the commit path, sharing the commit with concurrent calls. A caller must not wrap
   * `apply` in its own transaction instead of `alsoInTransaction`, since long polls are woken at this commit.
   * Untraced: its span is the hand-made `ActorHost.commit`, once per event, which the outbox rows link back to.
   * Built from the fiber at hand rather than as a generator: it runs once per event.
   */
  const apply: Apply = ((
    depositRequestId: string,
    eventId: string,
    event: DepositRequestEvent,
    alsoInTransaction?: (applied: Stepped) => Effect.Effect<void, unknown, unknown>
  ) =>
    Effect.withFiberRuntime<Applied, unknown, unknown>((fiber) => {
      const hand = startSpan(
        fiber as Fiber.RuntimeFiber<unknown, unknown>,
        "ActorHost.commit",
        fiber.currentSpan,
        ONE_EVENT
      )
      const commitSpan = hand?.span
      // The caller's context, for its statements run by a commit on another fiber (never its transaction).
      const context =
        alsoInTransaction === undefined
          ? undefined
          : (Context.omit(SqlClient.TransactionConnection)(
              fiber.currentContext as Context.Context<SqlClient.TransactionConnection>
            ) as Context.Context<unknown>)
      const submitted = group.submit("apply", {
        items: [{ depositRequestId, eventId, event }],
        also:
          alsoInTransaction === undefined || context === undefined
            ? undefined
            : ([stepped]) => {
                if (stepped === undefined) return Effect.void
                const also = alsoInTransaction(stepped)
                return Effect.provide(
                  commitSpan === undefined ? also : Effect.withParentSpan(also, commitSpan),
                  context
                )
              },
        traceParent: commitSpan === undefined ? null : traceParentOf(commitSpan),
        span: commitSpan
      })
      return hand === undefined
        ? submitted
        : Effect.onExit(submitted, (exit) => Effect.sync(() => hand.end(exit)))
    })) as Apply

  /** Many events in one commit, alone (not shared): a block's credits already make a large one. */
  const applyMany: ApplyMany = Effect.fn("ActorHost.commit", { captureStackTrace: false })(function* (
    items: ReadonlyArray<ActorEvent>,
    alsoInTransaction?: Effect.Effect<void, unknown, unknown>
  ) {
    yield* Effect.annotateCurrentSpan("deposit_request.events", items.length)
    const traceParent = yield* currentTraceParent
    const span = Option.getOrUndefined(yield* Effect.option(Effect.currentSpan))
    const context = yield* callerContext<unknown>()
    const [outcomes] = yield* commit([
      {
        items,
        also: alsoInTransaction === undefined ? undefined : () => Effect.provide(alsoInTransaction, context),
        traceParent,
        span
      }
    ])
    return outcomes!.filter((o) => o !== undefined).length
  }) as ApplyMany

  /**
   * To call once a first step's row is committed (the create's group commit writes it): shows the new actor to the
   * inspector and remembers its row. Untraced: once per create, whose span is the create's own.
   */
  const created = Effect.fnUntraced(function* (row: DepositRequestRow) {
    yield* Effect.sync(() => {
      memory.remember(row)
      inspector.created(toId("dr", row.id), row.snapshot)
    })
    if (lifecycleLog !== undefined) yield* lifecycleLog.created(row)
  })

  /** This instance's name in the step history, `undefined` when none is kept (the create writes version 1). */
  const historyInstance = history ? instance : undefined

  return { created, apply, applyMany, historyInstance } as const
})

/** The actor host: steps requests' machines and commits what each step decides (README: the actor host). */
export class ActorHost extends Effect.Service<ActorHost>()("deposits/ActorHost", {
  effect: make,
  dependencies: [ChangeFeed.Default, Metrics.Default, Instance.Default]
}) {}
