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
      -- thousandths of a token and epoch milliseconds: at one token a second, a millisecond refills one milli-token
      milli_tokens bigint not null,
      refilled_at_ms bigint not null
    )`
  // One round trip per API call: credit the refill since the last call (capped), then take a token if there is one.
  yield* sql.unsafe(`
    create function take_rate_token(p_account uuid, p_now_ms bigint, p_capacity bigint, p_refill_per_ms bigint)
    returns table (milli_tokens bigint, allowed boolean) language plpgsql as $$
    declare refilled bigint;
    begin
      insert into rate_limit_buckets as b (account_id, milli_tokens, refilled_at_ms)
      values (p_account, p_capacity, p_now_ms) on conflict (account_id) do nothing;
      select least(p_capacity, b.milli_tokens + greatest(0, p_now_ms - b.refilled_at_ms) * p_refill_per_ms)
        into refilled from rate_limit_buckets b where b.account_id = p_account for update;
      allowed := refilled >= 1000;
      milli_tokens := case when allowed then refilled - 1000 else refilled end;
      update rate_limit_buckets b
        set milli_tokens = take_rate_token.milli_tokens, refilled_at_ms = greatest(b.refilled_at_ms, p_now_ms)
        where b.account_id = p_account;
      return next;
    end $$`)
})
