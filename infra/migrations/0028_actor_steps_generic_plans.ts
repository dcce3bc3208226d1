import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `apply_actor_steps_v2` plans its statements once a session (generic plans) instead of letting PostgreSQL choose
 * per call. Its parameters are one `jsonb` document and the array of ids read from it, and its statements reach
 * rows only through primary keys (`enable_seqscan` is off): a custom plan is no better at any size. Yet PostgreSQL
 * keeps custom plans, made again on every call, wherever their estimated cost is below the generic plan's, as for a
 * call of one event (an attestation, a lone credit: the common commit at low load), and planning the function's
 * four statements cost more than running them (`npm run bench -- actorSteps`; infra/decisions).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe("alter function apply_actor_steps_v2(jsonb) set plan_cache_mode = force_generic_plan")
})
