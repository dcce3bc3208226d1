import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Work an actor's commit leaves for later (outbox rows, the webhook jobs and transfers made from them) keeps the
 * W3C `traceparent` of the commit, so the span that does the work links back to the request that caused it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table outbox add column trace_parent text`
  yield* sql`alter table webhook_jobs add column trace_parent text`
  yield* sql`alter table transfers add column trace_parent text`
})
