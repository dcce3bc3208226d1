import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * Every change of account state made through a credential, append-only and kept `AUDIT_LOG_RETENTION_DAYS`
 * (infra/decisions/0076-audit-log-and-security-notices.md). The actor is a member (its id), an API key (keys have
 * no id: its last four characters) or the operator's CLI session, with the label a reader knows it by then (the
 * member's address); ids are UUIDv7, so the newest-first page walks the primary key.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table audit_log (
      id uuid primary key,
      account_id uuid not null references accounts(id),
      actor_kind text not null check (actor_kind in ('member', 'api_key', 'operator')),
      actor_id text,
      actor_label text not null,
      action text not null,
      target_id text,
      at timestamptz not null,
      client text not null,
      user_agent text,
      request_id text
    )`
  yield* sql`create index audit_log_by_account on audit_log (account_id, id desc)`
  yield* sql`create index audit_log_by_time on audit_log (at)`
  yield* applyFunctionFiles(["refuse_audit_log_change"])
  yield* sql`
    create trigger audit_log_append_only before update or delete on audit_log
    for each row execute function refuse_audit_log_change()`
})
