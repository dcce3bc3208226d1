import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook endpoints, delivery jobs (one attempt series of one event to one endpoint; its retry state lives here,
 * so retries survive restarts) and the delivery log (one row per attempt).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table webhook_endpoints (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      url text not null,
      -- needed in clear to sign every delivery; shown to the merchant only in the creation answer
      secret text not null,
      created_at timestamptz not null,
      disabled_at timestamptz
    )`
  yield* sql`create index webhook_endpoints_account on webhook_endpoints (account_id, id desc)`
  yield* sql`
    create table webhook_jobs (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      endpoint_id uuid not null references webhook_endpoints (id),
      event_id uuid not null references lifecycle_events (id),
      redelivery boolean not null,
      attempts integer not null default 0,
      state text not null check (state in ('pending', 'succeeded', 'failed', 'cancelled')),
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      created_at timestamptz not null
    )`
  // The first series of an event to an endpoint exists once, however often the outbox is relayed.
  yield* sql`create unique index webhook_jobs_once on webhook_jobs (endpoint_id, event_id) where not redelivery`
  yield* sql`create index webhook_jobs_due on webhook_jobs (next_attempt_at) where state = 'pending'`
  yield* sql`
    create table webhook_deliveries (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      endpoint_id uuid not null references webhook_endpoints (id),
      job_id uuid not null references webhook_jobs (id),
      event_id uuid not null,
      event_type text not null,
      attempt integer not null,
      redelivery boolean not null,
      outcome text not null check (outcome in ('succeeded', 'retrying', 'failed')),
      response_status integer,
      error_kind text,
      error_message text,
      attempted_at timestamptz not null,
      duration_ms integer not null,
      next_attempt_at timestamptz
    )`
  yield* sql`create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, id desc)`
})
