import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option, Random } from "effect"
import { AppConfig } from "../src/Config"
import { Bus } from "./Bus"
import { Ids } from "./Ids"
import { JOBS_SUBJECT } from "./OutboxRelay"
import { gapMs, MAX_ATTEMPTS } from "./WebhookSchedule"
import { WebhookSender } from "./WebhookSender"
import { makeWake } from "./Wake"
import { signPayload } from "./WebhookSignature"

export const DISPATCH_IDLE = Duration.millis(250)
/** Deliveries in flight per instance: a slow endpoint holds one slot, never the others (2 on the embedded database). */
export const DISPATCH_CONCURRENCY = 16
export const EMBEDDED_DISPATCH_CONCURRENCY = 2

interface ClaimedJob {
  readonly id: string
  readonly account_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly redelivery: boolean
  readonly attempts: number
  readonly url: string
  readonly secret: string
  readonly disabled_at: Date | null
  readonly type: string
  readonly body: string
}

/**
 * One delivery attempt of one due job: claim it (SKIP LOCKED, so any number of dispatchers share the work), send
 * the event's fixed bytes signed now, record the attempt, and schedule the retry or end the series.
 */
export const dispatchOnce = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const sender = yield* WebhookSender
  const { webhookFirstRetryMs, webhookClaimTtlMs } = yield* AppConfig
  const now = new Date(yield* Clock.currentTimeMillis)
  const claimed = yield* sql<ClaimedJob>`
    with job as (
      select id from webhook_jobs
      where state = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until < ${now})
      order by next_attempt_at limit 1 for update skip locked
    )
    update webhook_jobs j set locked_until = ${new Date(now.getTime() + webhookClaimTtlMs)}
    from job, webhook_endpoints e, lifecycle_events ev
    where j.id = job.id and e.id = j.endpoint_id and ev.id = j.event_id
    returning j.id, j.account_id, j.endpoint_id, j.event_id, j.redelivery, j.attempts, e.url, e.secret,
      e.disabled_at, ev.type, ev.body`
  const job = claimed[0]
  if (job === undefined) return false
  if (job.disabled_at !== null) {
    yield* sql`update webhook_jobs set state = 'cancelled', locked_until = null where id = ${job.id}`
    return true
  }
  const t = Math.floor(now.getTime() / 1000)
  const outcome = yield* sender.send({
    url: job.url,
    body: job.body,
    headers: {
      "content-type": "application/json",
      "service-event-id": `evt_${job.event_id}`,
      "service-event-type": job.type,
      "service-signature": signPayload(job.secret, t, job.body),
      "user-agent": "deposits-webhooks/1"
    }
  })
  const attempt = job.attempts + 1
  const finished = new Date(yield* Clock.currentTimeMillis)
  const retryAt =
    outcome.ok || attempt >= MAX_ATTEMPTS
      ? null
      : new Date(finished.getTime() + gapMs(attempt, yield* Random.next, webhookFirstRetryMs))
  const state = outcome.ok ? "succeeded" : retryAt === null ? "failed" : "pending"
  yield* sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`
        insert into webhook_deliveries (id, account_id, endpoint_id, job_id, event_id, event_type, attempt, redelivery,
          outcome, response_status, error_kind, error_message, attempted_at, duration_ms, next_attempt_at)
        values (${ids.next()}, ${job.account_id}, ${job.endpoint_id}, ${job.id}, ${job.event_id}, ${job.type},
          ${attempt}, ${job.redelivery}, ${outcome.ok ? "succeeded" : retryAt === null ? "failed" : "retrying"},
          ${outcome.status ?? null}, ${outcome.errorKind ?? null}, ${outcome.errorMessage ?? null}, ${now},
          ${Math.round(outcome.durationMs)}, ${retryAt})`
      yield* sql`
        update webhook_jobs set attempts = ${attempt}, state = ${state}, locked_until = null,
          next_attempt_at = ${retryAt ?? finished}
        where id = ${job.id}`
    })
  )
  return true
})

/** How long a worker other than the lead waits when idle, if nothing wakes it first (a safety net only). */
export const DISPATCH_FOLLOWER_IDLE = Duration.seconds(5)

export const WebhookDispatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    // Jobs relayed on any instance wake every idle worker here. Of the idle workers only the lead polls for due
    // retries every DISPATCH_IDLE (16 polling workers were ~64 queries a second on an idle instance); a worker
    // that found work wakes one idle peer, so a backlog fans out to every worker within a few claims.
    const wake = makeWake()
    yield* (yield* Bus).listen(JOBS_SUBJECT, () => wake.wake())
    const worker = (idleMs: number) =>
      dispatchOnce.pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("webhook dispatch failed", cause), false)),
        Effect.flatMap((worked) => (worked ? Effect.sync(wake.wakeOne) : wake.idle(idleMs))),
        Effect.forever
      )
    const { databaseUrl } = yield* AppConfig
    const workers = Option.isSome(databaseUrl) ? DISPATCH_CONCURRENCY : EMBEDDED_DISPATCH_CONCURRENCY
    for (let i = 0; i < workers; i++) {
      yield* Effect.forkScoped(worker(Duration.toMillis(i === 0 ? DISPATCH_IDLE : DISPATCH_FOLLOWER_IDLE)))
    }
  })
)
