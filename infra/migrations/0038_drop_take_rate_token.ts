import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Drops `take_rate_token` (0001), the one-token-a-call bucket function: the rate limiter has called
 * `take_rate_tokens` (0010, same refill rule) since 0010, so no running build calls it. `if exists`, as
 * `storedFunctions.ts` says for a function whose file is deleted.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop function if exists take_rate_token(uuid, bigint, bigint, bigint)`
})
