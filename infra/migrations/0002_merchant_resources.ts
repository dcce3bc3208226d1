import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The resources a deposit request refers to: customers, issuer identities and payout addresses. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table customers (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      name text not null,
      email text,
      description text,
      metadata jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index customers_account on customers (account_id, id desc) where deleted_at is null`
  yield* sql`
    create table issuers (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      display_name text not null,
      legal_name text,
      support_email text,
      support_url text,
      metadata jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index issuers_account on issuers (account_id, id desc) where deleted_at is null`
  yield* sql`
    create table payout_addresses (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      address text not null,
      label text,
      metadata jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      disabled_at timestamptz
    )`
  yield* sql`create index payout_addresses_account on payout_addresses (account_id, id desc)`
})
