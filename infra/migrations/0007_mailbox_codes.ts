import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** One-time mailbox codes: only their digests, each with an expiry and a single use. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table mailbox_codes (
      id uuid primary key,
      deposit_request_id uuid not null references deposit_requests (id),
      code_digest bytea not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`
  yield* sql`create index mailbox_codes_request on mailbox_codes (deposit_request_id, expires_at desc)`
})
