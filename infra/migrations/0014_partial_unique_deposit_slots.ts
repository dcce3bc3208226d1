import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A request has no deposit index or address until its payer attests a wallet, yet the unique constraints on both
 * put an entry for every new row (NULLs included) into two B-trees. Partial unique indexes keep the same rule for
 * the values that exist and cost a create nothing; lookups by address (`deposit_address = …`) still use them.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table deposit_requests drop constraint deposit_requests_deposit_index_key`
  yield* sql`alter table deposit_requests drop constraint deposit_requests_deposit_address_key`
  yield* sql`
    create unique index deposit_requests_deposit_index on deposit_requests (deposit_index)
    where deposit_index is not null`
  yield* sql`
    create unique index deposit_requests_deposit_address on deposit_requests (deposit_address)
    where deposit_address is not null`
})
