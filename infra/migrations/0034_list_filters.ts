import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Indexes for the dashboard's list filters and delivery reads (infra/decisions/0061-list-filters-and-live-list.md).
 * None is on a column the actor steps update (status, version, snapshot, received, updated_at), so a step stays a
 * HOT update; each costs one index entry per create (or per delivery attempt), and the partial ones only for rows
 * that carry the value.
 *
 * Not added, because an index already answers: `deposit_address` (its unique index), `transaction_hash` (the
 * primary key of chain_credits and the unique tx_hash of transfers), `status` (account, status, id).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // `created_gte` / `created_lt`: a narrow window far back reads its range, then sorts that little by id.
  yield* sql`create index deposit_requests_account_created on deposit_requests (account_id, created_at)`
  // `reference`: most requests have none (the empty string), so only those that do are indexed.
  yield* sql`
    create index deposit_requests_account_reference on deposit_requests (account_id, reference, id desc)
    where reference <> ''`
  // `customer`: a customer belongs to one account, so its id alone finds its requests.
  yield* sql`
    create index deposit_requests_customer on deposit_requests (customer_id, id desc)
    where customer_id is not null`
  // `payer_wallet`: the wallet lives in the hot snapshot, so it is found through the one accepted wallet attempt
  // that bound it (written once, in the binding step's transaction), never through an index on the snapshot.
  yield* sql`
    create index verification_attempts_bound_wallet on verification_attempts (lower(wallet))
    where kind = 'wallet' and outcome = 'accepted'`
  // A request's deliveries: through its events.
  yield* sql`create index webhook_deliveries_event on webhook_deliveries (event_id)`
  // `outcome=failed` on an endpoint whose attempts mostly succeed.
  yield* sql`
    create index webhook_deliveries_endpoint_unsucceeded on webhook_deliveries (endpoint_id, id desc)
    where outcome <> 'succeeded'`
})
