import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Accounts, dashboard sessions, API keys and the shared rate-limit buckets. Secrets are stored as SHA-256 digests. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table accounts (
      id uuid primary key,
      name text not null,
      environment text not null check (environment in ('sandbox', 'production')),
      created_at timestamptz not null
    )`
  yield* sql`
    create table dashboard_sessions (
      digest bytea primary key,
      account_id uuid not null references accounts (id),
      created_at timestamptz not null,
      expires_at timestamptz not null,
      revoked_at timestamptz
    )`
  yield* sql`create index dashboard_sessions_account on dashboard_sessions (account_id)`
  yield* sql`
    create table api_keys (
      digest bytea primary key,
      account_id uuid not null references accounts (id),
      environment text not null check (environment in ('sandbox', 'production')),
      last4 text not null,
      created_at timestamptz not null,
      -- set when a newer key replaced this one: it stays valid until then (the grace period)
      grace_until timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`create index api_keys_account on api_keys (account_id)`
  // One active (not replaced, not revoked) key per account, held by the database and not only by code.
  yield* sql`create unique index api_keys_one_active on api_keys (account_id) where grace_until is null and revoked_at is null`
  yield* sql`
    create table rate_limit_buckets (
      account_id uuid primary key references accounts (id),
      -- thousandths of a token, so refill arithmetic stays in integers
      milli_tokens bigint not null,
      refilled_at timestamptz not null
    )`
})
