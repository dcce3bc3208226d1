import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The payer side: one-time deposit indexes from a sequence (safe under concurrency and across instances, never
 * reused) and the record of every verification attempt (`va_`), which also makes a wallet statement single-use.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create sequence deposit_index_seq minvalue 0 start 0`
  yield* sql`
    create table verification_attempts (
      id uuid primary key,
      deposit_request_id uuid not null references deposit_requests (id),
      kind text not null check (kind in ('merchant_session', 'wallet', 'mailbox_send', 'mailbox_code')),
      outcome text not null check (outcome in ('accepted', 'refused')),
      reason text,
      -- a wallet statement's signature digest: accepted once, ever
      proof_digest bytea,
      attempted_at timestamptz not null
    )`
  yield* sql`create index verification_attempts_request on verification_attempts (deposit_request_id, attempted_at)`
  yield* sql`
    create unique index verification_attempts_proof_once on verification_attempts (proof_digest)
    where proof_digest is not null and outcome = 'accepted'`
})
