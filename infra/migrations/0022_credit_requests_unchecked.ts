import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The watcher records a block's credits in one statement, and the foreign key to `deposit_requests` cost each
 * credit a lookup and a row lock there, a large share of that step in a busy block (infra/decisions). The
 * ids it inserts are the ones it has just read from `deposit_requests` (a request is never deleted, and the
 * applied events that reference it keep their own key), so the check proved nothing the step had not.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table chain_credits drop constraint chain_credits_deposit_request_id_fkey`
})
