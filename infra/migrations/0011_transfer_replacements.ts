import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A stuck transfer is replaced at the same nonce with higher fees: the transaction it replaced may still be the
 * one mined, so every hash it had is kept, and when it was last signed (to know when it is stuck).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table transfers add column replaced_tx_hashes text[] not null default '{}'`
  yield* sql`alter table transfers add column signed_at timestamptz not null default now()`
  yield* sql`update transfers set signed_at = created_at`
})
