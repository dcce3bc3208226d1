import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** When a credit's block turned out not to be canonical after all (a reorganisation deeper than finality). */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table chain_credits add column reorged_at timestamptz`
  yield* sql`create index chain_credits_recent on chain_credits (chain_id, seen_at) where reorged_at is null`
})
