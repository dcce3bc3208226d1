import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The paused requests of every account, for the operator's metric `deposits_requests_needing_attention` read at
 * each scrape (infra/decisions/0089-alerts-and-runbook.md): a partial index holds only those rows, so the count
 * does not grow with history. `status` is already indexed, so an actor step that keeps its status stays a HOT update.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create index deposit_requests_needing_attention on deposit_requests (id) where status = 'needs_attention'`
})
