import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Indexes for the account summary (infra/decisions/0084-account-summary-and-overview.md): each of its reads is a
 * range of one account's index bounded by time, so its cost follows the last 30 days, not the account's history.
 *
 * Not added, because an index already answers: requests created in the window (`deposit_requests_account_created`),
 * paused requests (`deposit_requests_account_status`), an endpoint's latest delivery (`webhook_deliveries_endpoint`),
 * the last events (`lifecycle_events_account`).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Settlements and returns by the instant they happened: one range per event type.
  yield* sql`create index lifecycle_events_account_type_time on lifecycle_events (account_id, type, occurred_at)`
  // Open requests by deadline, per account (the deadline index is for the scheduler, across accounts).
  yield* sql`
    create index deposit_requests_account_open_deadline on deposit_requests (account_id, expires_at)
    where status in ('awaiting_payer', 'ready', 'partially_deposited')`
  // An endpoint's failed attempts by time, for "failing within the last hour".
  yield* sql`
    create index webhook_deliveries_endpoint_failed_time on webhook_deliveries (endpoint_id, attempted_at)
    where outcome in ('retrying', 'failed')`
})
