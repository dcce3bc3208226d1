import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import pg from "pg"
import { actorHostRuntime } from "../../support/ActorHostRuntime"
import { actorStepsInput, copyRequestRows } from "../../support/actorStepsInput"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"

/**
 * A step that changes no indexed column of its request (a second credit, say: same status, same address) should
 * rewrite the row on its own page, heap-only (HOT), writing no entry into any of the table's six indexes. That
 * needs room on the page, which `deposit_requests`' fillfactor keeps (migration 0026); at the default of 100 a full
 * page has none and every such update moves the row and writes six index entries. Counted from the session's own
 * statistics (`pg_stat_xact_user_tables`): nothing is timed.
 */
describe("request rows updated in place", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let client: pg.Client

  beforeAll(async () => {
    db = await createTestDatabase()
    const accountId = (await createMerchant(db.url)).accountId.slice("acct_".length)
    const runtime = actorHostRuntime(db.url)
    await runtime.runPromise(seedDepositRequest(accountId))
    await runtime.dispose()
    client = new pg.Client({ connectionString: db.url })
    await client.connect()
    // Pages filled as inserts fill them (to the fillfactor), with no dead rows a vacuum could make room from.
    await client.query("alter table deposit_requests set (autovacuum_enabled = false)")
    await copyRequestRows(client, 2000)
  }, 60_000)
  afterAll(async () => {
    await client?.end()
    await db?.drop()
  })

  it("keeps a step that changes no indexed column heap-only", async () => {
    const input = await actorStepsInput(client, 8, { where: "deposit_address is null" })
    expect(JSON.parse(input).requests).toHaveLength(8)
    // The session's counts not yet reported include earlier statements': compare before and after, in one
    // transaction (nothing is reported until it ends).
    const counts = async () =>
      (
        await client.query<{ updated: string; hot: string }>(`
          select n_tup_upd::text as updated, n_tup_hot_upd::text as hot
          from pg_stat_xact_user_tables where relname = 'deposit_requests'`)
      ).rows[0]!
    await client.query("begin")
    const before = await counts()
    const problems = await client.query("select * from apply_actor_steps_v2($1::jsonb)", [input])
    const after = await counts()
    await client.query("commit")
    expect(problems.rows).toEqual([])
    expect(Number(after.updated) - Number(before.updated)).toBe(8)
    expect(Number(after.hot) - Number(before.hot)).toBe(8)
  }, 60_000)
})
