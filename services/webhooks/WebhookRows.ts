import { Model } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, ParseResult, Schema } from "effect"

/**
 * The webhook room's rows as schemas. The CRUD reads decode through them (`SqlSchema`), so a column renamed or
 * retyped under the code fails as the room's infrastructure error (`SqlError`) and never reads as `undefined`.
 * The delivery hot path (the relay's and the dispatcher's statements) types its rows with the same schemas without
 * decoding each row; test/integration/webhooks/webhookRows.test.ts runs those statements on a migrated database and
 * decodes what they return.
 */

const Timestamp = Schema.DateFromSelf
const NullableTimestamp = Schema.NullOr(Schema.DateFromSelf)

/** A row of `webhook_endpoints`: an HTTPS endpoint, or a listener (no URL; its CLI pulls its deliveries). */
export class WebhookEndpoint extends Model.Class<WebhookEndpoint>("WebhookEndpoint")({
  id: Schema.String,
  account_id: Schema.String,
  url: Schema.String,
  secret: Model.Sensitive(Schema.String),
  created_at: Timestamp,
  disabled_at: NullableTimestamp,
  listener: Schema.Boolean,
  event_types: Schema.NullOr(Schema.Array(Schema.String)),
  last_polled_at: NullableTimestamp,
  /** The secret a rotation replaced: it still signs, beside `secret`, until its expiry. */
  previous_secret: Model.Sensitive(Schema.NullOr(Schema.String)),
  previous_secret_expires_at: NullableTimestamp
}) {}

/** A row of `webhook_deliveries`: one attempt in the delivery log. */
export class WebhookDelivery extends Model.Class<WebhookDelivery>("WebhookDelivery")({
  id: Schema.String,
  account_id: Schema.String,
  endpoint_id: Schema.String,
  job_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  attempt: Schema.Int,
  redelivery: Schema.Boolean,
  outcome: Schema.Literal("succeeded", "retrying", "failed", "cancelled"),
  response_status: Schema.NullOr(Schema.Int),
  error_kind: Schema.NullOr(Schema.String),
  error_message: Schema.NullOr(Schema.String),
  attempted_at: Timestamp,
  duration_ms: Schema.Int,
  next_attempt_at: NullableTimestamp,
  /** The headers the attempt sent (null before migration 0046); its body is its event's fixed bytes. */
  request_headers: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** The first RESPONSE_BODY_KEPT characters of the answer's body; null when there was no answer. */
  response_body: Schema.NullOr(Schema.String),
  response_body_truncated: Schema.Boolean
}) {}

/** A row's id, for statements that answer which rows they touched or found. */
export const IdRow = Schema.Struct({ id: Schema.String })

/**
 * A stored lifecycle event's body, as its emitter wrote it. Fields the envelope does not name are kept: the body is
 * answered as it was stored.
 */
export const StoredEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  occurred_at: Schema.String,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ parseOptions: { onExcessProperty: "preserve" } })

/** `lifecycle_events` read for the event list: the id (the page's cursor) and the decoded body. */
export const EventRow = Schema.Struct({ id: Schema.String, body: Schema.parseJson(StoredEvent) })

/** A job's delivery as a claim reads it (the dispatcher's, or a listening CLI's). */
export const AttemptedJobRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  redelivery: Schema.Boolean,
  /** Attempts before this one. */
  attempts: Schema.Int,
  type: Schema.String
})

/** The dispatcher's claim: the job with what its attempt sends (where, signed with what, the event's bytes). */
export const ClaimedJobRow = Schema.Struct({
  ...AttemptedJobRow.fields,
  url: Schema.String,
  secret: Schema.String,
  /** The rotated-out secret while it is still live at the claim (null otherwise). */
  previous_secret: Schema.NullOr(Schema.String),
  disabled_at: NullableTimestamp,
  body: Schema.String,
  trace_parent: Schema.NullOr(Schema.String)
})

/** What the dispatcher reads of a job it could not claim, to decide whether its message waits or is dropped. */
export const JobStateRow = Schema.Struct({
  state: Schema.String,
  publications: Schema.Int,
  next_attempt_at: Timestamp,
  locked_until: NullableTimestamp
})

/** A listener's due delivery as its CLI's poll claims it. */
export const ListenerJobRow = Schema.Struct({
  event_id: Schema.String,
  attempts: Schema.Int,
  type: Schema.String,
  body: Schema.String
})

/** The relay's pass: each due outbox row with one active endpoint of its event's account (or none). */
export const RelayRow = Schema.Struct({
  id: Schema.String,
  event_id: Schema.String,
  trace_parent: Schema.NullOr(Schema.String),
  endpoint_id: Schema.NullOr(Schema.String),
  account_id: Schema.NullOr(Schema.String),
  listener: Schema.NullOr(Schema.Boolean)
})

/** A job whose publication number was counted up, to be published under it. */
export const UnpublishedJobRow = Schema.Struct({
  id: Schema.String,
  endpoint_id: Schema.String,
  publications: Schema.Int
})

/** Where a row failed to decode and how, without the values (a row can hold a secret). */
const issuesOf = (e: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(e)
    .map((issue) => `${issue.path.join(".") || "row"}: ${issue._tag === "Missing" ? "missing" : issue._tag}`)
    .join(", ")

/**
 * A row that does not decode (or a statement that should have answered one row and answered none) means the code
 * and the database disagree: the room's infrastructure error, as a failed statement is.
 */
export const rowsOrSqlError = <A, E, R>(
  effect: Effect.Effect<A, E | ParseResult.ParseError | Cause.NoSuchElementException, R>,
  what: string
): Effect.Effect<A, Exclude<E, ParseResult.ParseError | Cause.NoSuchElementException> | SqlError, R> =>
  Effect.catchIf(
    effect,
    (e): e is ParseResult.ParseError | Cause.NoSuchElementException =>
      ParseResult.isParseError(e) || Cause.isNoSuchElementException(e),
    (e) =>
      Effect.fail(
        new SqlError({
          message: ParseResult.isParseError(e)
            ? `${what}: a row did not decode (${issuesOf(e)})`
            : `${what}: the statement answered no row`
        })
      )
  ) as Effect.Effect<A, Exclude<E, ParseResult.ParseError | Cause.NoSuchElementException> | SqlError, R>
