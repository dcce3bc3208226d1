import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Duration, Effect, Layer, Option, Random } from "effect"
import { Bus } from "./Bus"
import { Ids } from "./Ids"
import { JOBS_SUBJECT } from "./OutboxRelay"
import { gapMs, MAX_ATTEMPTS } from "./WebhookSchedule"
import { WebhookSender } from "./WebhookSender"
import { makeWorkSignal } from "./WorkSignal"
import { signPayload } from "./WebhookSignature"
import { spanCausedBy } from "./TraceContext"
import { Metrics } from "./Metrics"
import { databaseUrl, positiveInteger } from "./Settings"

/** How often an instance looks for due retries (first attempts are woken by the relay's notice at once). */
export const DISPATCH_IDLE = Duration.millis(250)
/** Deliveries in flight per instance (2 on the embedded database). */
export const DISPATCH_CONCURRENCY = 16
export const EMBEDDED_DISPATCH_CONCURRENCY = 2
/**
 * Deliveries one endpoint may have in flight on one instance, so an endpoint that hangs (each attempt held to the
 * 10 s limit) holds at most this many workers and never all of them (1 of the embedded database's 2).
 */
export const DISPATCH_PER_ENDPOINT = 4
export const EMBEDDED_DISPATCH_PER_ENDPOINT = 1

/** The endpoints this instance is delivering to, and which of them are at their cap. */
export const makeEndpointSlots = (perEndpoint: number) => {
  const inFlight = new Map<string, number>()
  return {
    /** Endpoints at their cap, as a PostgreSQL uuid[] literal for the claim (`{}` when none). */
    saturated: () => {
      const full: Array<string> = []
      for (const [endpoint, n] of inFlight) if (n >= perEndpoint) full.push(endpoint)
      return `{${full.join(",")}}`
    },
    take: (endpoint: string) => inFlight.set(endpoint, (inFlight.get(endpoint) ?? 0) + 1),
    give: (endpoint: string) => {
      const n = (inFlight.get(endpoint) ?? 1) - 1
      if (n <= 0) inFlight.delete(endpoint)
      else inFlight.set(endpoint, n)
    }
  }
}
export type EndpointSlots = ReturnType<typeof makeEndpointSlots>

/**
 * `WEBHOOK_FIRST_RETRY_MS`: the first retry gap (each next one doubles, capped at an hour);
 * `WEBHOOK_CLAIM_TTL_MS`: how long a claimed job stays locked before a crashed dispatcher's job is taken by another.
 */
export const dispatchSettings = Config.all({
  webhookFirstRetryMs: positiveInteger("WEBHOOK_FIRST_RETRY_MS", 30_000),
  webhookClaimTtlMs: positiveInteger("WEBHOOK_CLAIM_TTL_MS", 60_000),
  databaseUrl
})
export type DispatchSettings = Config.Config.Success<typeof dispatchSettings>

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
  readonly trace_parent: string | null
}

/**
 * One delivery attempt of one due job: claim it (SKIP LOCKED, so any number of dispatchers share the work; never
 * for an endpoint at its cap here), send the event's fixed bytes signed now, record the attempt, and schedule the
 * retry or end the series.
 */
export const dispatchOnce = (slots: EndpointSlots, settings: DispatchSettings) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { webhookClaimTtlMs } = settings
    const now = new Date(yield* Clock.currentTimeMillis)
    const claimed = yield* sql<ClaimedJob>`
    with job as (
      select id from webhook_jobs
      where state = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until < ${now})
        and endpoint_id <> all(${slots.saturated()}::uuid[])
      order by next_attempt_at limit 1 for update skip locked
    )
    update webhook_jobs j set locked_until = ${new Date(now.getTime() + webhookClaimTtlMs)}
    from job, webhook_endpoints e, lifecycle_events ev
    where j.id = job.id and e.id = j.endpoint_id and ev.id = j.event_id
    returning j.id, j.account_id, j.endpoint_id, j.event_id, j.redelivery, j.attempts, e.url, e.secret,
      e.disabled_at, ev.type, ev.body, j.trace_parent`
    const job = claimed[0]
    if (job === undefined) return false
    if (job.disabled_at !== null) {
      yield* sql`update webhook_jobs set state = 'cancelled', locked_until = null where id = ${job.id}`
      return true
    }
    slots.take(job.endpoint_id)
    // A shutdown waits for an attempt under way (10 s at most) so it is recorded, not sent again by another instance.
    return yield* deliver(job, now, settings).pipe(
      spanCausedBy("Webhook.deliver", job.trace_parent, {
        "webhook.event_id": `evt_${job.event_id}`,
        "webhook.event_type": job.type,
        "webhook.attempt": job.attempts + 1
      }),
      Effect.uninterruptible,
      Effect.ensuring(Effect.sync(() => slots.give(job.endpoint_id)))
    )
  })

const deliver = (job: ClaimedJob, now: Date, settings: DispatchSettings) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const ids = yield* Ids
    const sender = yield* WebhookSender
    const metrics = yield* Metrics
    const { webhookFirstRetryMs } = settings
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
        // A disable during the attempt cancelled the series: it stays cancelled, and the attempt promises no retry.
        const kept = yield* sql`
        update webhook_jobs set attempts = ${attempt}, state = ${state}, locked_until = null,
          next_attempt_at = ${retryAt ?? finished}
        where id = ${job.id} and state <> 'cancelled'
        returning id`
        const cancelled = kept.length === 0
        if (cancelled) {
          yield* sql`update webhook_jobs set attempts = ${attempt}, locked_until = null where id = ${job.id}`
        }
        const logged = outcome.ok
          ? "succeeded"
          : cancelled
            ? "cancelled"
            : retryAt === null
              ? "failed"
              : "retrying"
        yield* sql`
        insert into webhook_deliveries (id, account_id, endpoint_id, job_id, event_id, event_type, attempt, redelivery,
          outcome, response_status, error_kind, error_message, attempted_at, duration_ms, next_attempt_at)
        values (${ids.next()}, ${job.account_id}, ${job.endpoint_id}, ${job.id}, ${job.event_id}, ${job.type},
          ${attempt}, ${job.redelivery}, ${logged},
          ${outcome.status ?? null}, ${outcome.errorKind ?? null}, ${outcome.errorMessage ?? null}, ${now},
          ${Math.round(outcome.durationMs)}, ${cancelled ? null : retryAt})`
      })
    )
    metrics.webhookAttempts.inc({
      outcome: outcome.ok ? "succeeded" : state === "failed" ? "failed" : "retrying"
    })
    return true
  })

/** How long an idle worker waits if nothing wakes it first (a safety net only: notices and the poller wake it). */
export const DISPATCH_WORKER_IDLE = Duration.seconds(5)

export const WebhookDispatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    // Jobs relayed on any instance wake every idle worker here; a poller that never delivers looks for due
    // retries every DISPATCH_IDLE and wakes one idle worker when there are some, so a worker held by a hanging
    // receiver never delays anyone else's retries; a worker that found work wakes one idle peer, so a backlog fans
    // out to every worker within a few claims.
    const sql = yield* PgClient.PgClient
    const settings = yield* dispatchSettings
    const embedded = Option.isNone(settings.databaseUrl)
    const slots = makeEndpointSlots(embedded ? EMBEDDED_DISPATCH_PER_ENDPOINT : DISPATCH_PER_ENDPOINT)
    const wake = makeWorkSignal()
    yield* (yield* Bus).listen(JOBS_SUBJECT, () => wake.wake())
    const worker = dispatchOnce(slots, settings).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("webhook dispatch failed", cause), false)),
      Effect.flatMap((worked) =>
        worked ? Effect.sync(wake.wakeOne) : wake.idle(Duration.toMillis(DISPATCH_WORKER_IDLE))
      ),
      Effect.forever
    )
    const tick = makeWorkSignal()
    const poller = Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      const due = yield* sql<{ due: boolean }>`
        select exists (
          select 1 from webhook_jobs
          where state = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until < ${now})
            and endpoint_id <> all(${slots.saturated()}::uuid[])
        ) as due`
      if (due[0]?.due === true) wake.wakeOne()
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logError("webhook due-job poll failed", cause)),
      Effect.zipRight(tick.idle(Duration.toMillis(DISPATCH_IDLE))),
      Effect.forever
    )
    yield* Effect.forkScoped(poller)
    const workers = embedded ? EMBEDDED_DISPATCH_CONCURRENCY : DISPATCH_CONCURRENCY
    for (let i = 0; i < workers; i++) yield* Effect.forkScoped(worker)
  })
)
