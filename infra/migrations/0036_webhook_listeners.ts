import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Listeners (infra/decisions/0068-local-webhook-forwarding.md): temporary webhook endpoints of the sandbox with no
 * URL, whose deliveries a `deposits listen` CLI pulls and forwards to the merchant's machine. They live beside the
 * endpoints, so fan-out, jobs, retries and the delivery log are the endpoints' own. `event_types` null: every
 * event. `last_polled_at`: a listener no CLI has polled for the listener TTL is expired (disabled).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table webhook_endpoints add column listener boolean not null default false`
  yield* sql`alter table webhook_endpoints add column event_types text[]`
  yield* sql`alter table webhook_endpoints add column last_polled_at timestamptz`
  // The expiry sweep reads only live listeners.
  yield* sql`
    create index webhook_endpoints_live_listeners on webhook_endpoints (last_polled_at)
    where listener and disabled_at is null`
  // A listener's poll: its pending jobs, by when they are due.
  yield* sql`
    create index webhook_jobs_endpoint_due on webhook_jobs (endpoint_id, next_attempt_at)
    where state = 'pending'`
})
