import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An attempt whose retry will never come, because its endpoint was disabled, is logged as `cancelled` with no
 * `next_attempt_at`, so the delivery log never promises a retry that disabling took away.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table webhook_deliveries drop constraint webhook_deliveries_outcome_check`
  yield* sql`
    alter table webhook_deliveries add constraint webhook_deliveries_outcome_check
    check (outcome in ('succeeded', 'retrying', 'failed', 'cancelled'))`
})
