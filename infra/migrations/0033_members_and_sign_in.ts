import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The account's people and how they sign in (infra/decisions/0059-members-and-sign-in.md): members with their own
 * email, one-time email codes and links, invitations, passkeys and their challenges, and a record of every sign-in
 * attempt (the rate limits count it). Every secret is kept as a SHA-256 digest. Dashboard sessions now name the
 * member they belong to (null for the operator CLI's sessions) and get an id of their own, so a member can list and
 * end them without ever seeing another session's token.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table members (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      -- lower-cased; one live membership per address in a deployment, so an address signs in to one account
      email text not null,
      created_at timestamptz not null,
      invited_by uuid references members (id),
      removed_at timestamptz
    )`
  yield* sql`create unique index members_live_email on members (email) where removed_at is null`
  yield* sql`create index members_account on members (account_id)`

  yield* sql`
    alter table dashboard_sessions
      add column id uuid not null default gen_random_uuid(),
      add column member_id uuid references members (id),
      add column user_agent text`
  yield* sql`create unique index dashboard_sessions_id on dashboard_sessions (id)`
  yield* sql`create index dashboard_sessions_member on dashboard_sessions (member_id) where member_id is not null`

  yield* sql`
    create table sign_in_codes (
      id uuid primary key,
      email text not null,
      -- digest of "<id>:<six digits>", and of the link's token: either one signs in, once
      code_digest bytea not null,
      link_digest bytea not null unique,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`
  yield* sql`create index sign_in_codes_email on sign_in_codes (email, created_at)`

  yield* sql`
    create table member_invites (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      email text not null,
      token_digest bytea not null unique,
      -- null when the operator's CLI invited the account's owner
      invited_by uuid references members (id),
      created_at timestamptz not null,
      expires_at timestamptz not null,
      accepted_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`create index member_invites_account on member_invites (account_id, created_at)`

  yield* sql`
    create table passkeys (
      id uuid primary key,
      member_id uuid not null references members (id),
      -- base64url, as WebAuthn names it
      credential_id text not null unique,
      public_key bytea not null,
      counter bigint not null,
      transports text[] not null default '{}',
      name text not null,
      created_at timestamptz not null,
      last_used_at timestamptz
    )`
  yield* sql`create index passkeys_member on passkeys (member_id)`

  yield* sql`
    create table webauthn_challenges (
      id uuid primary key,
      -- the member registering a passkey; null for a sign-in, where the passkey names its member
      member_id uuid references members (id),
      purpose text not null check (purpose in ('register', 'sign_in')),
      challenge text not null unique,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`

  yield* sql`
    create table sign_in_attempts (
      id uuid primary key,
      -- email_send, email_code, email_link, invite, passkey, sign_up
      kind text not null,
      email text,
      client text not null,
      member_id uuid,
      at timestamptz not null,
      -- signed_in, sent, or refused: <why>
      outcome text not null
    )`
  yield* sql`create index sign_in_attempts_email on sign_in_attempts (email, at) where email is not null`
  yield* sql`create index sign_in_attempts_client on sign_in_attempts (client, at)`
})
