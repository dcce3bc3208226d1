import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every merchant read bounded by its page, not by the account's history
 * (infra/decisions/0093-reads-bounded-by-page.md): each list is a range of an index that leads with what scopes it
 * (the account, the request) and ends with its sort key, so a page reads its rows and stops.
 *
 * None is on a column an actor step updates but `status`, already indexed, so steps that keep their status stay
 * HOT updates.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // A request's payments in and transfers out (its transfers route, the search by transaction hash's join back,
  // reconciliation's per-request sums): found by the request, not by scanning every credit and transfer.
  yield* sql`create index chain_credits_request on chain_credits (deposit_request_id)`
  yield* sql`create index transfers_request on transfers (deposit_request_id)`
  // `created_gte` / `created_lt`: the page is read in (created_at, id) order, so a window far back is a range
  // that stops after a page instead of every row of the window sorted by id. Replaces (account_id, created_at),
  // which the account summary's "created in the window" reads the same way.
  yield* sql`
    create index deposit_requests_account_created_id on deposit_requests (account_id, created_at desc, id desc)`
  yield* sql`drop index deposit_requests_account_created`
  // A status and a date window together.
  yield* sql`
    create index deposit_requests_account_status_created
    on deposit_requests (account_id, status, created_at desc, id desc)`
  // `GET /v1/events` (with or without `type=`) and the summary's last events: newest first by time, then id. An
  // event's id is derived from its request and dedupe key (decision 0099), so it does not order events by time.
  yield* sql`
    create index lifecycle_events_account_time_id on lifecycle_events (account_id, occurred_at desc, id desc)`
  yield* sql`
    create index lifecycle_events_account_type_time_id
    on lifecycle_events (account_id, type, occurred_at desc, id desc)`
})
