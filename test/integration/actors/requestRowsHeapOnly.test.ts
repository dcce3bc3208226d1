import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import { actorStepsInput, copyRequestRows } from "../../support/actorStepsInput"
import { seededSqlSession } from "../../support/seededSqlSession"
import { seedDepositRequest } from "../../support/seedDepositRequest"

/**
 * A step that changes no indexed column of its request (a second credit, say: same status, same address) should
 * rewrite the row on its own page, heap-only (HOT), writing no entry into any of the table's six indexes. That
 * needs room on the page, which `deposit_requests`' fillfactor keeps (migration 0026); at the default of 100 a full
 * page has none and every such update moves the row and writes six index entries. Counted from the session's own
 * statistics (`pg_stat_xact_user_tables`): nothing is timed.
 */

class Session extends Context.Tag("test/Session")<Session, pg.Client>() {}

/** One request seeded the production way, then copied 2,000 times straight in SQL, on a session kept open. */
const SessionLive = Layer.scoped(
  Session,
  Effect.gen(function* () {
    const { client } = yield* seededSqlSession(seedDepositRequest)
    // Pages filled as inserts fill them (to the fillfactor), with no dead rows a vacuum could make room from.
    yield* Effect.promise(() => client.query("alter table deposit_requests set (autovacuum_enabled = false)"))
    yield* Effect.promise(() => copyRequestRows(client, 2000))
    return client
  })
)

/** The query on the session, as an effect. */
const query = <R extends pg.QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) =>
  Effect.flatMap(Session, (client) => Effect.promise(() => client.query<R>(text, values as Array<unknown>)))

// The live clock, as the seed had before: the requests are created at the real time.
layer(SessionLive, { timeout: 60_000, excludeTestServices: true })("request rows updated in place", (it) => {
  it.effect(
    "keeps a step that changes no indexed column heap-only",
    () =>
      Effect.gen(function* () {
        const input = yield* Effect.flatMap(Session, (client) =>
          Effect.promise(() => actorStepsInput(client, 8, { where: "deposit_address is null" }))
        )
        assert.lengthOf(JSON.parse(input).requests, 8)
        // The session's counts not yet reported include earlier statements': compare before and after, in one
        // transaction (nothing is reported until it ends).
        const counts = query<{ updated: string; hot: string }>(`
          select n_tup_upd::text as updated, n_tup_hot_upd::text as hot
          from pg_stat_xact_user_tables where relname = 'deposit_requests'`).pipe(
          Effect.map((r) => r.rows[0]!)
        )
        yield* query("begin")
        const before = yield* counts
        const problems = yield* query("select * from apply_actor_steps_v3($1::jsonb)", [input])
        const after = yield* counts
        yield* query("commit")
        assert.deepStrictEqual(problems.rows, [])
        assert.strictEqual(Number(after.updated) - Number(before.updated), 8)
        assert.strictEqual(Number(after.hot) - Number(before.hot), 8)
      }),
    60_000
  )
})
