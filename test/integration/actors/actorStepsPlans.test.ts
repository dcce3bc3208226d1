import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Runtime } from "effect"
import type pg from "pg"
import { actorStepsInput, copyRequestRows } from "../../support/actorStepsInput"
import { readsDuring } from "../../support/sessionReads"
import { seededSqlSession } from "../../support/seededSqlSession"
import { seedDepositRequest } from "../../support/seedDepositRequest"

/**
 * PL/pgSQL keeps a session's plans until the table's statistics change. Plans made while `deposit_requests` was
 * small (a new database, a burst of creates before autovacuum's next analyze) scanned the whole table to lock a
 * call's rows (8–12 ms a call of 8 credits where 1 ms was due; decision 0018), and plans made while
 * `applied_events` was analyzed as empty hashed that whole table on every call (migration 0029). What one call
 * reads is counted from the session's own statistics (`readsDuring`), so the test does not time anything.
 */

class Session extends Context.Tag("test/Session")<Session, pg.Client>() {}

/** Three requests seeded the production way, on a session kept open for every test (their plans are its plans). */
const SessionLive = Layer.scoped(
  Session,
  Effect.gen(function* () {
    const { client } = yield* seededSqlSession((accountId) =>
      Effect.forEach([1, 2, 3], () => seedDepositRequest(accountId))
    )
    // No analyze may refresh the statistics (and the plans) while the test grows the table.
    yield* Effect.promise(() => client.query("alter table deposit_requests set (autovacuum_enabled = false)"))
    return client
  })
)

/** The query on the session, as an effect. */
const query = <R extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  values?: ReadonlyArray<unknown>
) =>
  Effect.flatMap(Session, (client) => Effect.promise(() => client.query<R>(text, values as Array<unknown>)))

/** A call's input stepping `count` requests (their rows as stored, one version on), a lifecycle event on one. */
const steps = (count: number) =>
  Effect.flatMap(Session, (client) =>
    Effect.promise(() => actorStepsInput(client, count, { withLifecycle: true }))
  )

/** The call on the session, which must report no problem. */
const apply = (input: string) =>
  Effect.gen(function* () {
    const problems = yield* query("select * from apply_actor_steps_v3($1::jsonb)", [input])
    assert.deepStrictEqual(problems.rows, [])
  })

/** What `apply(input)` read from these relations, counted from the session's own statistics. */
const readsOfApply = (input: string, relations: Parameters<typeof readsDuring>[1]) =>
  Effect.gen(function* () {
    const client = yield* Session
    const runtime = yield* Effect.runtime<Session>()
    return yield* Effect.promise(() =>
      readsDuring(client, relations, () => Runtime.runPromise(runtime, apply(input)))
    )
  })

// The live clock, as the seed had before: the requests are created at the real time.
layer(SessionLive, { timeout: 60_000, excludeTestServices: true })(
  "apply_actor_steps_v3 on plans made while the table was small",
  (it) => {
    it.effect(
      "reads only the rows a call names once the table has grown",
      () =>
        Effect.gen(function* () {
          // More than five calls: from the sixth, PostgreSQL may keep one generic plan for the session.
          for (let i = 0; i < 8; i++) yield* apply(yield* steps(2))
          yield* Effect.flatMap(Session, (client) => Effect.promise(() => copyRequestRows(client, 3000)))

          const input = yield* steps(8)
          const { tables } = yield* readsOfApply(input, { tables: ["deposit_requests"] })
          assert.strictEqual(tables.deposit_requests!.seqScans, 0)
          // A probe per row named, to lock, check and update it (24 here, some room for another keyed plan); with
          // the plans of the small table, over 3,000.
          assert.isAtMost(tables.deposit_requests!.tuples, 8 * 4)
        }),
      60_000
    )

    it.effect(
      "probes applied_events by key on plans made while that table was analyzed as empty",
      () =>
        Effect.gen(function* () {
          // A new deployment: autovacuum analyzes the small table early, and every session plans from those
          // statistics.
          yield* query("alter table applied_events set (autovacuum_enabled = false)")
          yield* query("delete from applied_events")
          yield* query("analyze applied_events")
          yield* apply(yield* steps(8)) // the session's generic plan, made now
          // Then the table grows, as it does with every event ever applied.
          yield* query(`
            insert into applied_events (deposit_request_id, event_id, applied_at)
            select d.id, 'grown:' || g, now()
            from (select id from deposit_requests limit 50) d, generate_series(1, 100) g`)

          const input = yield* steps(8)
          const { indexEntries } = yield* readsOfApply(input, { indexes: ["applied_events_pkey"] })
          // At most one entry per event of the call; 0027's join hashed the whole table here (over 5,000 entries).
          assert.isAtMost(indexEntries.applied_events_pkey!, 8)
          // And an event applied already is still found by its probe: the call answers `seen` and writes nothing.
          const again = yield* query("select kind from apply_actor_steps_v3($1::jsonb)", [input])
          assert.include(
            again.rows.map((r) => r.kind),
            "seen"
          )
        }),
      60_000
    )

    it.effect("plans its statements once a session, for calls of any size", () =>
      Effect.gen(function* () {
        // Left to choose, PostgreSQL plans the statements again on every call of one event or of a block's 125
        // (migration 0028). `create or replace` resets a function's settings: a later version must set it again.
        const { rows } = yield* query<{ config: Array<string> | null }>(
          "select proconfig as config from pg_proc where proname = 'apply_actor_steps_v3'"
        )
        assert.lengthOf(rows, 1)
        const config = rows[0]!.config
        assert.isArray(config)
        assert.includeMembers(config!, ["plan_cache_mode=force_generic_plan", "enable_seqscan=off"])
        // Plans made while the table was small serve every size since: one event, then many, each reading its rows
        // only.
        for (const count of [1, 1, 16]) yield* apply(yield* steps(count))
      })
    )
  }
)
