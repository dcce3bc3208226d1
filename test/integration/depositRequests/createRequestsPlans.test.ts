import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import pg from "pg"
import { Customers, Issuers, PayoutAddresses } from "../../../services/merchants/MerchantResources"
import { actorHostRuntime } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { readsDuring } from "../../support/sessionReads"

/**
 * `create_deposit_requests` keeps its plan for the session. Made while `issuers` was small (a new deployment,
 * analyzed early), 0013's plan read every issuer of every account on each batch (migration 0030). What one call
 * reads is counted from the session's own statistics (`readsDuring`), so nothing is timed.
 */
describe("create_deposit_requests on plans made while the merchant tables were small", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  let client: pg.Client
  let accountId: string
  let refs: { issuerId: string; payoutId: string; customerId: string }

  beforeAll(async () => {
    db = await createTestDatabase()
    accountId = (await createMerchant(db.url)).accountId.slice("acct_".length)
    const runtime = actorHostRuntime(db.url)
    refs = await runtime.runPromise(
      Effect.gen(function* () {
        const issuer = yield* (yield* Issuers).create(accountId, { display_name: "Plans" })
        const payout = yield* (yield* PayoutAddresses).create(accountId, {
          address: "0x52908400098527886E0F7030069857D2E4169EE7"
        })
        const customer = yield* (yield* Customers).create(accountId, { name: "Plans" })
        return { issuerId: issuer.id, payoutId: payout.id, customerId: customer.id }
      })
    )
    await runtime.dispose()
    client = new pg.Client({ connectionString: db.url })
    await client.connect()
    for (const table of ["issuers", "payout_addresses", "customers"])
      await client.query(`alter table ${table} set (autovacuum_enabled = false)`)
  }, 60_000)
  afterAll(async () => {
    await client?.end()
    await db?.drop()
  })

  /** A batch of `count` creates for this merchant, with its references unless `row` gives others. */
  const batch = (count: number, row: Partial<Record<string, unknown>> = {}) =>
    JSON.stringify(
      Array.from({ length: count }, () => ({
        id: randomUUID(),
        account_id: accountId,
        key: randomUUID(),
        fingerprint: "00",
        status: "awaiting_payer",
        machine_version: 1,
        snapshot: {},
        amount_base_units: "100",
        received_base_units: "0",
        heading: "",
        reference: "",
        metadata: {},
        customer_id: refs.customerId,
        issuer_id: refs.issuerId,
        payout_address_id: refs.payoutId,
        payer_policy_mode: "none",
        expected_email: null,
        payer_reference: null,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        created_at: new Date().toISOString(),
        secret_digest: "00",
        ...row
      }))
    )
  const create = async (rows: string) =>
    (
      await client.query<{ id: string }>("select id from create_deposit_requests($1::jsonb, 86400000)", [
        rows
      ])
    ).rows

  it("reads one row per reference once the tables have grown", async () => {
    await client.query("analyze issuers, payout_addresses, customers")
    // More than five calls: from the sixth, PostgreSQL may keep one generic plan for the session.
    for (let i = 0; i < 8; i++) expect(await create(batch(2))).toHaveLength(2)
    // Then another merchant's records grow the tables.
    const other = randomUUID()
    await client.query(
      "insert into accounts (id, name, environment, created_at) select $1, 'Other', environment, now() from accounts limit 1",
      [other]
    )
    for (const [table, extra] of [
      ["issuers", "display_name"],
      ["payout_addresses", "address"],
      ["customers", "name"]
    ] as const)
      await client.query(
        `insert into ${table} (id, account_id, ${extra}, metadata, created_at, updated_at)
         select gen_random_uuid(), $1, 'other', '{}', now(), now() from generate_series(1, 5000)`,
        [other]
      )

    const rows = batch(8)
    const { value, tables } = await readsDuring(
      client,
      { tables: ["issuers", "payout_addresses", "customers"] },
      () => create(rows)
    )
    expect(value).toHaveLength(8)
    for (const [table, read] of Object.entries(tables)) {
      expect(read.seqScans, table).toBe(0)
      // One probe per create; 0013's plan of the small tables read all 5,001 issuers here.
      expect(read.tuples, table).toBeLessThanOrEqual(8)
    }
    expect(Object.keys(tables)).toHaveLength(3)
  }, 60_000)

  it("still refuses references that are not the account's own and live", async () => {
    const { rows } = await client.query<{ id: string }>(
      "select id from issuers where account_id <> $1 limit 1",
      [accountId]
    )
    const foreignIssuer = rows[0]?.id ?? randomUUID()
    expect(await create(batch(1, { issuer_id: foreignIssuer }))).toEqual([])
    expect(await create(batch(1, { payout_address_id: randomUUID() }))).toEqual([])
    expect(await create(batch(1, { customer_id: randomUUID() }))).toEqual([])
    expect(await create(batch(1, { customer_id: null }))).toHaveLength(1)
    await client.query("update customers set deleted_at = now() where id = $1", [refs.customerId])
    expect(await create(batch(1))).toEqual([])
  })
})
