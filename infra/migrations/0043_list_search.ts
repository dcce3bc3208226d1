import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Indexes for the list's one search, `q` (infra/decisions/0080-one-search-and-local-dates.md): each kind of search
 * is an index lookup. None is on a column the actor steps update, so a step stays a HOT update; each costs one
 * entry per create (the partial ones only for rows that carry the value).
 *
 * Not added, because an index already answers: `dr_` (primary key), `cus_` (0034's customer index), a reference
 * (0034), a deposit address (its unique index), a payer wallet (0034's bound-wallet index), a transaction hash
 * (chain_credits' primary key, transfers' unique tx_hash), `va_`, `evt_`, `whd_` (their tables' primary keys).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // `iss_` and `pa_`: an issuer and a payout address belong to one account, so the id alone finds its requests.
  yield* sql`create index deposit_requests_issuer on deposit_requests (issuer_id, id desc)`
  yield* sql`create index deposit_requests_payout_address on deposit_requests (payout_address_id, id desc)`
  // An email: the expected email, compared without case; most requests have none.
  yield* sql`
    create index deposit_requests_account_expected_email
    on deposit_requests (account_id, lower(expected_email), id desc)
    where expected_email is not null`
  // An email: the customers who have it (then their requests through the customer index).
  yield* sql`
    create index customers_account_email on customers (account_id, lower(email))
    where email is not null`
  // An address: the account's payout addresses at it (then their requests through the index above).
  yield* sql`create index payout_addresses_account_address on payout_addresses (account_id, lower(address))`
  // `att_`: the requests an attachment is attached to (the primary key leads with the request).
  yield* sql`create index deposit_request_attachments_attachment on deposit_request_attachments (attachment_id)`
})
