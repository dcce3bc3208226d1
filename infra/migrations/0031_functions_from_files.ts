import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * The stored functions' definitions leave the migrations: each now has one readable file,
 * `infra/sql/functions/<name>.sql`, and this migration applies them all (see `storedFunctions.ts` for how a later
 * change is made). When written, the files restated what 0001, 0010, 0029 and 0030 had left, settings included;
 * only comments and indentation differ.
 *
 * It also drops the first `apply_actor_steps` (0019, last replaced by 0025): the host has called
 * `apply_actor_steps_v2` since 0027, which kept the old one only for builds still running during that deploy.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop function apply_actor_steps(jsonb)`
  yield* applyFunctionFiles()
})
