import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Outgoing transfers (settlements and returns): each is signed and recorded, raw transaction included, before it
 * is broadcast; after a crash the recorded transaction is sent again, never a new one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table transfers (
      command_id text primary key,
      deposit_request_id uuid not null references deposit_requests (id),
      kind text not null check (kind in ('settle', 'return')),
      to_address text not null,
      amount_base_units numeric(78, 0) not null,
      tx_nonce integer not null,
      tx_hash text not null unique,
      raw_tx text not null,
      state text not null check (state in ('signed', 'confirmed', 'reverted')),
      block_number bigint,
      created_at timestamptz not null,
      confirmed_at timestamptz
    )`
  yield* sql`create index transfers_open on transfers (created_at) where state = 'signed'`
})
