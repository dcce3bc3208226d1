import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * Notices by email to the account's members (infra/decisions/0085-notices-by-email.md): each member's choice per
 * kind (no row: on), the queue of notices not yet mailed, and which member was mailed which notice (so a pass that
 * is run again after a crash mails nobody twice for what it already sent). The queue is written by triggers in the
 * transaction of each cause; their WHEN clauses keep every other write of those tables free of any trigger call.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table member_notice_preferences (
      member_id uuid not null references members(id) on delete cascade,
      kind text not null check (kind in ('request_paused', 'endpoint_failing', 'return_held')),
      enabled boolean not null,
      updated_at timestamptz not null,
      primary key (member_id, kind)
    )`
  yield* sql`
    create table pending_notices (
      id bigint generated always as identity primary key,
      account_id uuid not null,
      kind text not null check (kind in ('request_paused', 'endpoint_failing', 'return_held')),
      cause text not null unique,
      subject_id uuid not null,
      code text,
      occurred_at timestamptz not null,
      sent_at timestamptz
    )`
  yield* sql`create index pending_notices_unsent on pending_notices (account_id, id) where sent_at is null`
  yield* sql`create index pending_notices_sent on pending_notices (sent_at) where sent_at is not null`
  yield* sql`
    create table notice_deliveries (
      notice_id bigint not null references pending_notices(id) on delete cascade,
      member_id uuid not null,
      primary key (notice_id, member_id)
    )`
  yield* applyFunctionFiles(["queue_member_notice"])
  yield* sql`
    create trigger deposit_requests_paused_notice after update of status on deposit_requests
    for each row when (new.status = 'needs_attention' and old.status is distinct from 'needs_attention')
    execute function queue_member_notice()`
  yield* sql`
    create trigger held_transfers_return_notice after insert on held_transfers
    for each row when (new.payload ->> 'type' = 'return')
    execute function queue_member_notice()`
  yield* sql`
    create trigger webhook_deliveries_failed_notice after insert on webhook_deliveries
    for each row when (new.outcome = 'failed')
    execute function queue_member_notice()`
})
