import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Event-type filters per endpoint and viewable attempts (infra/decisions/0086-webhook-event-filters-and-bodies.md).
 * An endpoint's filter is the listeners' `event_types` column (0036): null is every type (`["*"]` on the wire), and
 * an empty filter is refused. Each attempt keeps the headers it sent (the body is its event's fixed bytes) and the
 * first 4096 characters of the answer's body, with whether more came.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table webhook_endpoints
      add constraint webhook_endpoints_event_types_not_empty
        check (event_types is null or cardinality(event_types) > 0)`
  yield* sql`
    alter table webhook_deliveries
      add column request_headers jsonb,
      add column response_body text,
      add column response_body_truncated boolean not null default false,
      add constraint webhook_deliveries_response_body_bounded check (char_length(response_body) <= 4096)`
})
