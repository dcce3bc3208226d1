import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The treasury reads the highest recorded nonce at every signing pass and walks the open transfers in nonce
 * order: an index keeps both cheap as the table grows.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create index transfers_nonce on transfers (tx_nonce)`
})
