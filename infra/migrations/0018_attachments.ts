import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Attachments (`att_`): a merchant's PDF, declared here and uploaded straight to object storage. A deposit
 * request carries up to ten of them, in order (`deposit_request_attachments`). The embedded object store keeps
 * its bytes in `stored_objects`; the secret that signs upload and download links is made once and shared by every
 * instance (`service_secrets`).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table attachments (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      file_name text not null,
      size_bytes bigint not null,
      declared_sha256 text,
      sha256 text,
      status text not null check (status in ('pending', 'uploaded', 'rejected', 'expired')),
      rejection_reason text,
      upload_expires_at timestamptz not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index attachments_by_account on attachments (account_id, id desc) where deleted_at is null`
  yield* sql`create index attachments_pending on attachments (upload_expires_at) where status = 'pending'`
  yield* sql`
    create table deposit_request_attachments (
      deposit_request_id uuid not null references deposit_requests (id),
      attachment_id uuid not null references attachments (id),
      position int not null,
      primary key (deposit_request_id, attachment_id)
    )`
  yield* sql`
    create table stored_objects (
      key text primary key,
      bytes bytea not null,
      content_type text not null,
      created_at timestamptz not null
    )`
  yield* sql`create table service_secrets (name text primary key, value text not null)`
})
