import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import { type DepositRequestRow, depositRequestColumns } from "../../../services/actors/ActorRow"
import { seededSqlSession } from "../../support/seededSqlSession"
import { seedDepositRequest } from "../../support/seedDepositRequest"

/**
 * The actor host's hot path keeps hand-written SQL and row types (STYLE: hot paths may, with a test holding their
 * row types to the schema): `DepositRequestRow`, read by the columns `depositRequestColumns` names, and the rows
 * `apply_actor_steps_v3` answers. This holds each field to its column's type and nullability, and to what the
 * driver hands back for it, on a database migrated from empty.
 */

/** Per field: its column's type (`udt_name`), whether it may be null, and what the driver makes of a value. */
const expected = {
  id: ["uuid", false, "string"],
  account_id: ["uuid", false, "string"],
  status: ["text", false, "string"],
  version: ["int8", false, "string"],
  machine_version: ["int4", false, "number"],
  snapshot: ["jsonb", false, "object"],
  amount_base_units: ["numeric", false, "string"],
  received_base_units: ["numeric", false, "string"],
  heading: ["text", false, "string"],
  reference: ["text", false, "string"],
  metadata: ["jsonb", false, "object"],
  customer_id: ["uuid", true, "string"],
  issuer_id: ["uuid", false, "string"],
  payout_address_id: ["uuid", false, "string"],
  payer_policy_mode: ["text", false, "string"],
  expected_email: ["text", true, "string"],
  payer_reference: ["text", true, "string"],
  return_url: ["text", true, "string"],
  deposit_index: ["int4", true, "number"],
  deposit_address: ["text", true, "string"],
  expires_at: ["timestamptz", false, "date"],
  created_at: ["timestamptz", false, "date"],
  updated_at: ["timestamptz", false, "date"]
} as const satisfies Record<
  keyof DepositRequestRow,
  readonly [string, boolean, "string" | "number" | "object" | "date"]
>

class Session extends Context.Tag("test/Session")<
  Session,
  { readonly client: pg.Client; readonly id: string }
>() {}

const SessionLive = Layer.scoped(
  Session,
  Effect.map(seededSqlSession(seedDepositRequest), ({ client, seeded }) => ({ client, id: seeded }))
)

const query = <R extends pg.QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) =>
  Effect.flatMap(Session, ({ client }) =>
    Effect.promise(() => client.query<R>(text, values as Array<unknown>))
  )

const kindOf = (value: unknown) => (value instanceof Date ? "date" : typeof value)

layer(SessionLive, { timeout: 60_000 })("the actor host's row types", (it) => {
  it.effect("read every field of DepositRequestRow from a column of its type and nullability", () =>
    Effect.gen(function* () {
      const { rows } = yield* query<{ column_name: string; udt_name: string; is_nullable: string }>(`
        select column_name, udt_name, is_nullable from information_schema.columns
        where table_schema = 'public' and table_name = 'deposit_requests'`)
      const columns = new Map(rows.map((r) => [r.column_name, r]))
      assert.deepStrictEqual([...depositRequestColumns].sort(), Object.keys(expected).sort())
      for (const name of depositRequestColumns) {
        const column = columns.get(name)
        assert.isDefined(column, `deposit_requests has no column ${name}`)
        const [type, nullable] = expected[name]
        assert.strictEqual(column!.udt_name, type, name)
        assert.strictEqual(column!.is_nullable === "YES", nullable, name)
      }
    })
  )

  it.effect("get from the driver, for each field read, a value of the kind its type says", () =>
    Effect.gen(function* () {
      const { id } = yield* Session
      // Every nullable column set, so each field's kind shows (the seed leaves some null).
      yield* query(
        `update deposit_requests set customer_id = gen_random_uuid(), expected_email = 'p@example.com',
           payer_reference = 'p', return_url = 'https://example.com', deposit_index = 7,
           deposit_address = '0x0000000000000000000000000000000000000007'
         where id = $1`,
        [id]
      )
      const { rows } = yield* query<Record<string, unknown>>(
        `select ${depositRequestColumns.join(", ")} from deposit_requests where id = $1`,
        [id]
      )
      assert.deepStrictEqual(Object.keys(rows[0]!), [...depositRequestColumns])
      for (const name of depositRequestColumns)
        assert.strictEqual(kindOf(rows[0]![name]), expected[name][2], name)
    })
  )

  it.effect("answer apply_actor_steps_v3's problems in the columns the statement reads", () =>
    Effect.gen(function* () {
      const { rows } = yield* query<{ result: string }>(
        "select pg_get_function_result('apply_actor_steps_v3(jsonb)'::regprocedure) as result"
      )
      assert.strictEqual(rows[0]!.result, "TABLE(kind text, deposit_request_id uuid, event_id text)")
    })
  )
})
