import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Random, Schema } from "effect"
import { Ids } from "../platform/Ids"
import { Metrics } from "../platform/Metrics"
import { gapMs, MAX_ATTEMPTS } from "./RetrySchedule"
import { type AttemptedJobRow, IdRow, rowsOrSqlError } from "./WebhookRows"
import { type DeliveryOutcome, RESPONSE_BODY_KEPT } from "./WebhookSender"

/** The job an attempt was made for, as its claim read it. */
export type AttemptedJob = typeof AttemptedJobRow.Type

/**
 * Records one attempt of a job, however it was made (the dispatcher's POST, or a listening CLI's forward): the
 * job's next state after the retry schedule, and the attempt's row in the delivery log. Returns when the job is
 * due again (null: it is over). `sentHeaders`: the headers the attempt sent, kept with the answer's start so the
 * attempt can be read back (infra/decisions/0086-webhook-event-filters-and-bodies.md).
 */
export const recordAttempt = (
  job: AttemptedJob,
  outcome: DeliveryOutcome,
  startedAt: Date,
  firstRetryMs: number,
  sentHeaders?: Readonly<Record<string, string>>
) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const ids = yield* Ids
    const metrics = yield* Metrics
    const attempt = job.attempts + 1
    const finished = new Date(yield* Clock.currentTimeMillis)
    const retryAt =
      outcome.ok || attempt >= MAX_ATTEMPTS
        ? null
        : new Date(finished.getTime() + gapMs(attempt, yield* Random.next, firstRetryMs))
    const state = outcome.ok ? "succeeded" : retryAt === null ? "failed" : "pending"
    // One statement, so one round trip and atomic: the job's row and the log of the attempt. A disable during the
    // attempt cancelled the series: it stays cancelled (only the attempt is counted), is logged as cancelled, and
    // the attempt promises no retry.
    yield* sql`
      with kept as (
        update webhook_jobs set attempts = ${attempt}, state = ${state}, locked_until = null,
          next_attempt_at = ${retryAt ?? finished}
        where id = ${job.id} and state <> 'cancelled'
        returning id
      ), cancelled as (
        update webhook_jobs set attempts = ${attempt}, locked_until = null
        where id = ${job.id} and not exists (select from kept)
        returning id
      )
      insert into webhook_deliveries (id, account_id, endpoint_id, job_id, event_id, event_type, attempt, redelivery,
        outcome, response_status, error_kind, error_message, attempted_at, duration_ms, next_attempt_at,
        request_headers, response_body, response_body_truncated)
      select ${ids.next()}, ${job.account_id}, ${job.endpoint_id}, ${job.id}, ${job.event_id}, ${job.type},
        ${attempt}, ${job.redelivery},
        case when ${outcome.ok} then 'succeeded' when exists (select from cancelled) then 'cancelled'
          else ${retryAt === null ? "failed" : "retrying"} end,
        ${outcome.status ?? null}, ${outcome.errorKind ?? null}, ${outcome.errorMessage ?? null}, ${startedAt},
        ${Math.round(outcome.durationMs)},
        case when exists (select from cancelled) then null else ${retryAt}::timestamptz end,
        ${sentHeaders === undefined ? null : JSON.stringify(sentHeaders)}::jsonb,
        ${outcome.responseBody === undefined ? null : outcome.responseBody.slice(0, RESPONSE_BODY_KEPT)},
        ${outcome.responseTruncated === true}`
    metrics.webhookAttempts.inc({
      endpoint: `wh_${job.endpoint_id}`,
      outcome: outcome.ok ? "succeeded" : state === "failed" ? "failed" : "retrying"
    })
    return retryAt
  })

/**
 * Disables an endpoint (or a listener) and cancels every delivery series still pending for it; its history stays
 * readable. Run inside the caller's transaction.
 */
export const cancelSeries = (endpointUuid: string, at: Date) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const disable = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
      execute: (r) =>
        sql`update webhook_endpoints set disabled_at = coalesce(disabled_at, ${r.at}) where id = ${r.id}`
    })
    const cancelPending = SqlSchema.findAll({
      Request: Schema.String,
      Result: IdRow,
      execute: (endpointId) => sql`
        update webhook_jobs set state = 'cancelled'
        where endpoint_id = ${endpointId} and state = 'pending' returning id`
    })
    // The last attempt of each cancelled series promised a retry that will not come.
    const cancelPromisedRetries = SqlSchema.void({
      Request: Schema.Array(Schema.String),
      execute: (jobIds) => sql`
        update webhook_deliveries set outcome = 'cancelled', next_attempt_at = null
        where id in (
          select distinct on (job_id) id from webhook_deliveries
          where job_id in ${sql.in(jobIds)}
          order by job_id, attempt desc
        ) and outcome = 'retrying'`
    })
    yield* rowsOrSqlError(disable({ id: endpointUuid, at }), "webhook_endpoints")
    const cancelled = yield* rowsOrSqlError(cancelPending(endpointUuid), "webhook_jobs")
    if (cancelled.length > 0) {
      yield* rowsOrSqlError(cancelPromisedRetries(cancelled.map((job) => job.id)), "webhook_deliveries")
    }
  })
