import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Deposit requests are actors whose home is their row: the persisted machine snapshot plus the columns lists and
 * filters need. Lifecycle events, outbox rows and the dedupe record of applied events commit in the same
 * transaction as the snapshot.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table deposit_requests (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      status text not null,
      -- bumped by every committed change; long polls and optimistic readers compare it
      version bigint not null,
      machine_version integer not null,
      snapshot jsonb not null,
      amount_base_units numeric(78, 0) not null check (amount_base_units > 0),
      received_base_units numeric(78, 0) not null default 0,
      heading text not null,
      reference text not null,
      metadata jsonb not null,
      customer_id uuid,
      issuer_id uuid not null,
      payout_address_id uuid not null,
      payer_policy_mode text not null,
      expected_email text,
      payer_reference text,
      merchant_session_secret_digest bytea,
      deposit_index integer unique,
      deposit_address text unique,
      expires_at timestamptz not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index deposit_requests_account on deposit_requests (account_id, id desc)`
  yield* sql`create index deposit_requests_account_status on deposit_requests (account_id, status, id desc)`
  yield* sql`create index deposit_requests_open_deadline on deposit_requests (expires_at) where status in ('awaiting_payer', 'ready', 'partially_deposited')`

  yield* sql`
    create table lifecycle_events (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      deposit_request_id uuid references deposit_requests (id),
      type text not null,
      -- the at-most-once types use the type itself; repeatable ones (recovered_funds) a per-occurrence key
      dedupe text not null,
      -- the exact bytes every delivery sends, fixed when the event is created
      body text not null,
      occurred_at timestamptz not null
    )`
  yield* sql`create unique index lifecycle_events_once on lifecycle_events (deposit_request_id, dedupe)`
  yield* sql`create index lifecycle_events_account on lifecycle_events (account_id, id desc)`

  yield* sql`
    create table outbox (
      id bigserial primary key,
      topic text not null,
      deposit_request_id uuid,
      payload jsonb not null,
      created_at timestamptz not null,
      published_at timestamptz
    )`
  yield* sql`create index outbox_unpublished on outbox (id) where published_at is null`

  yield* sql`
    create table applied_events (
      deposit_request_id uuid not null references deposit_requests (id),
      event_id text not null,
      applied_at timestamptz not null,
      primary key (deposit_request_id, event_id)
    )`

  yield* sql`
    create table idempotency_keys (
      account_id uuid not null references accounts (id),
      key text not null,
      -- digest of the immutable fields of the first request: a replay must match it
      fingerprint bytea not null,
      resource_id uuid not null,
      created_at timestamptz not null,
      primary key (account_id, key)
    )`
  yield* sql`create index idempotency_keys_created on idempotency_keys (created_at)`
})
