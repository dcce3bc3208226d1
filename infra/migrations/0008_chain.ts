import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The watcher's cursor and every credit it found, keyed by (chain, transaction, log index). */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table chain_cursors (
      chain_id integer primary key,
      last_block bigint not null
    )`
  yield* sql`
    create table chain_credits (
      chain_id integer not null,
      tx_hash text not null,
      log_index integer not null,
      block_number bigint not null,
      block_hash text not null,
      deposit_request_id uuid not null references deposit_requests (id),
      from_address text not null,
      amount_base_units numeric(78, 0) not null,
      seen_at timestamptz not null,
      -- set once the credit's event committed on the request; a crash in between re-applies it (deduped)
      applied_at timestamptz,
      primary key (chain_id, tx_hash, log_index)
    )`
  yield* sql`create index chain_credits_unapplied on chain_credits (seen_at) where applied_at is null`
})
