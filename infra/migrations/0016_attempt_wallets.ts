import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A wallet attempt keeps the wallet it was for (EIP-55), so a merchant can read who tried to attest what. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table verification_attempts add column wallet text`
})
