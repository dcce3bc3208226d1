import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import { Customers, Issuers, PayoutAddresses } from "../../../services/merchants/MerchantResources"
import { readsDuring } from "../../support/sessionReads"
import { seededSqlSession } from "../../support/seededSqlSession"

/**
 * `create_deposit_requests` keeps its plan for the session. Made while `issuers` was small (a new deployment,
 * analyzed early), 0013's plan read every issuer of every account on each batch (migration 0030). What one call
 * reads is counted from the session's own statistics (`readsDuring`), so nothing is timed.
 */

class Session extends Context.Tag("test/Session")<
  Session,
  {
    readonly client: pg.Client
    readonly accountId: string
    readonly refs: { readonly issuerId: string; readonly payoutId: string; readonly customerId: string }
  }
>() {}

/** A merchant's issuer, payout address and customer, made by the services, on a session kept open. */
const SessionLive = Layer.scoped(
  Session,
  Effect.gen(function* () {
    const { client, accountId, seeded } = yield* seededSqlSession((accountId) =>
      Effect.gen(function* () {
        const issuer = yield* (yield* Issuers).create(accountId, { display_name: "Plans" })
        const payout = yield* (yield* PayoutAddresses).create(accountId, {
          address: "0x52908400098527886E0F7030069857D2E4169EE7"
        })
        const customer = yield* (yield* Customers).create(accountId, { name: "Plans" })
        return { issuerId: issuer.id, payoutId: payout.id, customerId: customer.id }
      })
    )
    for (const table of ["issuers", "payout_addresses", "customers"])
      yield* Effect.promise(() => client.query(`alter table ${table} set (autovacuum_enabled = false)`))
    return { client, accountId, refs: seeded }
  })
)

/** The query on the session, as an effect. */
const query = <R extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  values?: ReadonlyArray<unknown>
) =>
  Effect.flatMap(Session, ({ client }) =>
    Effect.promise(() => client.query<R>(text, values as Array<unknown>))
  )

/** A batch of `count` creates for this merchant, with its references unless `row` gives others. */
const batch = (count: number, row: Partial<Record<string, unknown>> = {}) =>
  Effect.map(Session, ({ accountId, refs }) =>
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
  )
const createOn = async (client: pg.Client, rows: string) =>
  (await client.query<{ id: string }>("select id from create_deposit_requests($1::jsonb, 86400000)", [rows]))
    .rows
const create = (rows: string) =>
  Effect.flatMap(Session, ({ client }) => Effect.promise(() => createOn(client, rows)))

// The live clock, as the seed had before: the records are created at the real time.
layer(SessionLive, { timeout: 60_000, excludeTestServices: true })(
  "create_deposit_requests on plans made while the merchant tables were small",
  (it) => {
    it.effect(
      "reads one row per reference once the tables have grown",
      () =>
        Effect.gen(function* () {
          yield* query("analyze issuers, payout_addresses, customers")
          // More than five calls: from the sixth, PostgreSQL may keep one generic plan for the session.
          for (let i = 0; i < 8; i++) assert.lengthOf(yield* create(yield* batch(2)), 2)
          // Then another merchant's records grow the tables.
          const other = randomUUID()
          yield* query(
            "insert into accounts (id, name, environment, created_at) select $1, 'Other', environment, now() from accounts limit 1",
            [other]
          )
          for (const [table, extra] of [
            ["issuers", "display_name"],
            ["payout_addresses", "address"],
            ["customers", "name"]
          ] as const)
            yield* query(
              `insert into ${table} (id, account_id, ${extra}, metadata, created_at, updated_at)
               select gen_random_uuid(), $1, 'other', '{}', now(), now() from generate_series(1, 5000)`,
              [other]
            )

          const rows = yield* batch(8)
          const { client } = yield* Session
          const { value, tables } = yield* Effect.promise(() =>
            readsDuring(client, { tables: ["issuers", "payout_addresses", "customers"] }, () =>
              createOn(client, rows)
            )
          )
          assert.lengthOf(value, 8)
          for (const [table, read] of Object.entries(tables)) {
            assert.strictEqual(read.seqScans, 0, table)
            // One probe per create; 0013's plan of the small tables read all 5,001 issuers here.
            assert.isAtMost(read.tuples, 8, table)
          }
          assert.lengthOf(Object.keys(tables), 3)
        }),
      60_000
    )

    it.effect("still refuses references that are not the account's own and live", () =>
      Effect.gen(function* () {
        const { accountId, refs } = yield* Session
        const { rows } = yield* query<{ id: string }>(
          "select id from issuers where account_id <> $1 limit 1",
          [accountId]
        )
        const foreignIssuer = rows[0]?.id ?? randomUUID()
        assert.deepStrictEqual(yield* create(yield* batch(1, { issuer_id: foreignIssuer })), [])
        assert.deepStrictEqual(yield* create(yield* batch(1, { payout_address_id: randomUUID() })), [])
        assert.deepStrictEqual(yield* create(yield* batch(1, { customer_id: randomUUID() })), [])
        assert.lengthOf(yield* create(yield* batch(1, { customer_id: null })), 1)
        yield* query("update customers set deleted_at = now() where id = $1", [refs.customerId])
        assert.deepStrictEqual(yield* create(yield* batch(1)), [])
      })
    )
  }
)
