import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { actorHostRuntime } from "../../support/ActorHostRuntime"
import { actorStepsInput, copyRequestRows } from "../../support/actorStepsInput"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"
import { readsDuring } from "../../support/sessionReads"

/**
 * PL/pgSQL keeps a session's plans until the table's statistics change. Plans made while `deposit_requests` was
 * small (a new database, a burst of creates before autovacuum's next analyze) scanned the whole table to lock a
 * call's rows (8–12 ms a call of 8 credits where 1 ms was due; README, Decisions), and plans made while
 * `applied_events` was analyzed as empty hashed that whole table on every call (migration 0029). What one call
 * reads is counted from the session's own statistics (`readsDuring`), so the test does not time anything.
 */
describe("apply_actor_steps_v2 on plans made while the table was small", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let client: pg.Client
  let accountId: string

  beforeAll(async () => {
    db = await createTestDatabase()
    accountId = (await createMerchant(db.url)).accountId.slice("acct_".length)
    const runtime = actorHostRuntime(db.url)
    await runtime.runPromise(Effect.forEach([1, 2, 3], () => seedDepositRequest(accountId)))
    await runtime.dispose()
    client = new pg.Client({ connectionString: db.url })
    await client.connect()
    // No analyze may refresh the statistics (and the plans) while the test grows the table.
    await client.query("alter table deposit_requests set (autovacuum_enabled = false)")
  }, 60_000)
  afterAll(async () => {
    await client?.end()
    await db?.drop()
  })

  /** A call's input stepping `count` requests (their rows as stored, one version on), a lifecycle event on one. */
  const steps = (count: number) => actorStepsInput(client, count, { withLifecycle: true })
  const apply = async (input: string) => {
    const problems = await client.query("select * from apply_actor_steps_v2($1::jsonb)", [input])
    expect(problems.rows).toEqual([])
  }

  it("reads only the rows a call names once the table has grown", async () => {
    // More than five calls: from the sixth, PostgreSQL may keep one generic plan for the session.
    for (let i = 0; i < 8; i++) await apply(await steps(2))
    await copyRequestRows(client, 3000)

    const input = await steps(8)
    const { tables } = await readsDuring(client, { tables: ["deposit_requests"] }, () => apply(input))
    expect(tables.deposit_requests!.seqScans).toBe(0)
    // A probe per row named, to lock, check and update it (24 here, some room for another keyed plan); with the
    // plans of the small table, over 3,000.
    expect(tables.deposit_requests!.tuples).toBeLessThanOrEqual(8 * 4)
  }, 60_000)

  it("probes applied_events by key on plans made while that table was analyzed as empty", async () => {
    // A new deployment: autovacuum analyzes the small table early, and every session plans from those statistics.
    await client.query("alter table applied_events set (autovacuum_enabled = false)")
    await client.query("delete from applied_events")
    await client.query("analyze applied_events")
    await apply(await steps(8)) // the session's generic plan, made now
    // Then the table grows, as it does with every event ever applied.
    await client.query(`
      insert into applied_events (deposit_request_id, event_id, applied_at)
      select d.id, 'grown:' || g, now() from (select id from deposit_requests limit 50) d, generate_series(1, 100) g`)

    const input = await steps(8)
    const { indexEntries } = await readsDuring(client, { indexes: ["applied_events_pkey"] }, () =>
      apply(input)
    )
    // At most one entry per event of the call; 0027's join hashed the whole table here (over 5,000 entries).
    expect(indexEntries.applied_events_pkey).toBeLessThanOrEqual(8)
    // And an event applied already is still found by its probe: the call answers `seen` and writes nothing.
    const again = await client.query("select kind from apply_actor_steps_v2($1::jsonb)", [input])
    expect(again.rows.map((r) => r.kind)).toContain("seen")
  }, 60_000)

  it("plans its statements once a session, for calls of any size", async () => {
    // Left to choose, PostgreSQL plans the statements again on every call of one event or of a block's 125
    // (migration 0028). `create or replace` resets a function's settings: a later version must set it again.
    const { rows } = await client.query<{ config: Array<string> | null }>(
      "select proconfig as config from pg_proc where proname = 'apply_actor_steps_v2'"
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]!.config).toEqual(
      expect.arrayContaining(["plan_cache_mode=force_generic_plan", "enable_seqscan=off"])
    )
    // Plans made while the table was small serve every size since: one event, then many, each reading its rows only.
    for (const count of [1, 1, 16]) await apply(await steps(count))
  })
})
