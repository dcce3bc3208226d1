import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Duration, Effect, Layer, Option, Queue } from "effect"
import { WEBHOOK_CONSUMER } from "../../infra/jetstream/Streams"
import { consumeIntoQueue, EventStream, type StreamMessage } from "../platform/eventStream/EventStream"
import { messageDecoder } from "../platform/eventStream/MessageDecoding"
import { recordAttempt } from "./DeliveryAttempts"
import { makeDeliveryLines } from "./DeliveryLines"
import { JobMessage } from "./OutboxRelay"
import type { ClaimedJobRow, JobStateRow } from "./WebhookRows"
import { WebhookSender } from "./WebhookSender"
import { deliveryHeaders } from "./WebhookSignature"
import { spanCausedBy } from "../platform/TraceContext"
import { workerLoop } from "../platform/Worker"
import { databaseUrl, positiveInteger } from "../platform/Settings"

/**
 * Deliveries in flight per instance (2 on the embedded database). A worker mostly waits on a receiver, so they are
 * many: a burst to one fast endpoint is not held to a handful of connections, and a hung one still leaves most free.
 */
export const DISPATCH_CONCURRENCY = 32
export const EMBEDDED_DISPATCH_CONCURRENCY = 2
/**
 * Deliveries one endpoint may have in flight on one instance, so an endpoint that hangs (each attempt held to the
 * 10 s limit) holds at most this many workers and never all of them (1 of the embedded database's 2).
 */
export const DISPATCH_PER_ENDPOINT = 8
export const EMBEDDED_DISPATCH_PER_ENDPOINT = 1

/**
 * The jobs one endpoint may have waiting on one instance beyond those in flight: as many as it drains in
 * LINE_DRAIN_MS at its recent pace (a hung endpoint, 10 s an attempt: 48; a fast one: up to LINE_MAX), and
 * LINE_TOTAL for every endpoint together, a fifth of the webhook consumer's unacknowledged messages. A minute, not
 * less: under a burst the first attempts are slow (the machine is busy committing it), and a line sized by them
 * sent most of the burst back to the stream for seconds.
 */
export const LINE_DRAIN_MS = 60_000
export const LINE_MAX = 2_000
export const LINE_TOTAL = 2_000
/** How often the jobs in line restart their ack wait (the consumer's is 30 s). */
export const LINE_KEEPALIVE_MS = 10_000

/**
 * `WEBHOOK_FIRST_RETRY_MS`: the first retry gap (each next one doubles, capped at an hour);
 * `WEBHOOK_CLAIM_TTL_MS`: how long a claimed job stays locked before a crashed dispatcher's job is taken by another
 * (or a listening CLI's, one it took and never answered for, is offered again);
 * `WEBHOOK_LISTENER_TTL_MS`: how long a listener lives without a poll from its CLI before it expires.
 */
export const dispatchSettings = Config.all({
  webhookFirstRetryMs: positiveInteger("WEBHOOK_FIRST_RETRY_MS", 30_000),
  webhookClaimTtlMs: positiveInteger("WEBHOOK_CLAIM_TTL_MS", 60_000),
  webhookListenerTtlMs: positiveInteger("WEBHOOK_LISTENER_TTL_MS", 120_000),
  databaseUrl
})
export type DispatchSettings = Config.Config.Success<typeof dispatchSettings>

/** A claimed job with what its attempt sends: where, signed with what, and the event's stored bytes. */
type ClaimedJob = typeof ClaimedJobRow.Type

/**
 * The dispatcher's claim of one job's message: the job, locked for the claim TTL, if it is pending, of this
 * publication, due and unlocked. Hot path: rows typed by `ClaimedJobRow`, not decoded (webhookRows.test.ts decodes
 * what it returns on a migrated database).
 */
export const claimJob = (sql: PgClient.PgClient, message: JobMessage, now: Date, lockedUntil: Date) =>
  sql<ClaimedJob>`
    update webhook_jobs j set locked_until = ${lockedUntil}
    from webhook_endpoints e, lifecycle_events ev
    where j.id = ${message.job_id} and j.state = 'pending' and j.publications = ${message.publication}
      and j.next_attempt_at <= ${now} and (j.locked_until is null or j.locked_until < ${now})
      and e.id = j.endpoint_id and ev.id = j.event_id
    returning j.id, j.account_id, j.endpoint_id, j.event_id, j.redelivery, j.attempts, e.url, e.secret,
      case when e.previous_secret_expires_at > ${now} then e.previous_secret end as previous_secret, e.disabled_at, ev.type, ev.body, j.trace_parent`

/** What decides a message the claim did not take (typed by `JobStateRow`, held to the schema as `claimJob` is). */
export const jobState = (sql: PgClient.PgClient, jobId: string) =>
  sql<typeof JobStateRow.Type>`
    select state, publications, next_attempt_at, locked_until from webhook_jobs where id = ${jobId}`

/**
 * What to do with a delivery job's message once its attempt (if any) is over, and how long the attempt took (none
 * made: undefined).
 */
export type Settled = ({ readonly _tag: "Done" } | { readonly _tag: "Later"; readonly delayMs: number }) & {
  readonly attemptMs?: number
}

const done: Settled = { _tag: "Done" }
const later = (delayMs: number): Settled => ({ _tag: "Later", delayMs: Math.max(0, Math.ceil(delayMs)) })

/** A message for an endpoint whose line here is full is offered again after this long at least. */
export const SATURATED_DELAY_MS = 250
/** A message naming a publication the row does not show yet (a concurrent re-publication) waits this long. */
export const UNRECORDED_DELAY_MS = 100

/**
 * One delivery job's message, in one of its endpoint's slots here (the caller took it): the job's row decides. A
 * due, unlocked job of this publication is claimed (locked for the claim TTL), attempted with the event's fixed bytes
 * signed now, recorded, and either ends (the message is acked) or is due again after the schedule's gap (the message
 * comes back after it). A message for a job that ended, or an older copy, is dropped; one that came early (a job
 * locked by another dispatcher, or not yet due) waits.
 */
export const dispatchJob = (message: JobMessage, settings: DispatchSettings) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const { webhookClaimTtlMs } = settings
    const now = new Date(yield* Clock.currentTimeMillis)
    const claimed = yield* claimJob(sql, message, now, new Date(now.getTime() + webhookClaimTtlMs))
    const job = claimed[0]
    if (job === undefined) {
      const rows = yield* jobState(sql, message.job_id)
      const row = rows[0]
      if (row === undefined || row.state !== "pending" || row.publications > message.publication) return done
      if (row.publications < message.publication) return later(UNRECORDED_DELAY_MS)
      const lockedFor = row.locked_until === null ? 0 : row.locked_until.getTime() - now.getTime()
      return later(Math.max(lockedFor, row.next_attempt_at.getTime() - now.getTime(), 1))
    }
    if (job.disabled_at !== null) {
      yield* sql`update webhook_jobs set state = 'cancelled', locked_until = null where id = ${job.id}`
      return done
    }
    // A shutdown waits for an attempt under way (10 s at most) so it is recorded, not sent again by another instance.
    return yield* deliver(job, now, settings).pipe(
      spanCausedBy("Webhook.deliver", job.trace_parent, {
        "webhook.event_id": `evt_${job.event_id}`,
        "webhook.event_type": job.type,
        "webhook.attempt": job.attempts + 1
      }),
      Effect.uninterruptible
    )
  })

const deliver = (job: ClaimedJob, now: Date, settings: DispatchSettings) =>
  Effect.gen(function* () {
    const sender = yield* WebhookSender
    const t = Math.floor(now.getTime() / 1000)
    const headers = deliveryHeaders(
      job,
      job.previous_secret === null ? [job.secret] : [job.secret, job.previous_secret],
      t
    )
    const outcome = yield* sender.send({ url: job.url, body: job.body, headers })
    const retryAt = yield* recordAttempt(job, outcome, now, settings.webhookFirstRetryMs, headers)
    const settled = retryAt === null ? done : later(retryAt.getTime() - (yield* Clock.currentTimeMillis))
    return { ...settled, attemptMs: outcome.durationMs }
  })

/** A job's message as it enters the room; a malformed one is logged and termed. */
export const decodeJobMessage = messageDecoder("webhook", JobMessage)

/** Messages taken from the stream ahead of the workers, per instance. */
export const DISPATCH_BUFFER = 2

export const WebhookDispatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    // Every instance consumes the one webhook consumer: JetStream hands each job's message to one dispatcher and
    // brings it back after a nak's delay (the retry schedule) or the ack wait (a dispatcher that died).
    const settings = yield* dispatchSettings
    const embedded = Option.isNone(settings.databaseUrl)
    const perEndpoint = embedded ? EMBEDDED_DISPATCH_PER_ENDPOINT : DISPATCH_PER_ENDPOINT
    type Lined = { readonly message: StreamMessage; readonly job: JobMessage }
    const lines = makeDeliveryLines<Lined>({
      perEndpoint,
      maxPerLine: LINE_MAX,
      maxWaiting: LINE_TOTAL,
      drainMs: LINE_DRAIN_MS,
      unknownAttemptMs: 100,
      minRetryMs: SATURATED_DELAY_MS,
      maxRetryMs: 60_000
    })
    const workers = embedded ? EMBEDDED_DISPATCH_CONCURRENCY : DISPATCH_CONCURRENCY
    /**
     * Works in one of the endpoint's slots, then on the jobs in its line, until the line is empty. Stopped (a
     * shutdown) between two jobs, it hands the one it was given back to the stream at once.
     */
    const work = (first: Lined) =>
      Effect.suspend(() => {
        let current: Lined | undefined = first
        return Effect.whileLoop({
          while: () => current !== undefined,
          body: () =>
            Effect.gen(function* () {
              const { message, job } = current!
              message.working()
              const settled = yield* dispatchJob(job, settings).pipe(
                Effect.catchAllCause((cause) =>
                  Effect.as(Effect.logError("webhook dispatch failed", cause), later(DISPATCH_ERROR_DELAY_MS))
                )
              )
              if (settled._tag === "Done") message.ack()
              else message.nak(settled.delayMs)
              const { next, evicted, retryInMs } = lines.give(job.endpoint_id, settled.attemptMs)
              for (const left of evicted) left.message.nak(retryInMs)
              current = next
            }),
          step: () => undefined
        }).pipe(Effect.onInterrupt(() => Effect.sync(() => current?.message.nak())))
      })
    const handle = (message: StreamMessage) =>
      Effect.gen(function* () {
        const decoded = yield* decodeJobMessage(message)
        if (Option.isNone(decoded)) return
        const job = decoded.value
        if (lines.take(job.endpoint_id)) return yield* work({ message, job })
        // The endpoint is at its cap here: the job waits in its line, or in the stream when the line is full.
        message.working()
        const retryInMs = lines.wait(job.endpoint_id, { message, job })
        if (retryInMs !== undefined) message.nak(retryInMs)
      })
    // Messages that reached this instance but no worker, and jobs in line, are given back at once on shutdown.
    const inbox = yield* consumeIntoQueue(yield* EventStream, WEBHOOK_CONSUMER, workers * DISPATCH_BUFFER)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const { message } of lines.takeAllWaiting()) message.nak()
      })
    )
    yield* Effect.forkScoped(
      workerLoop({
        name: "WebhookDispatcher.keepalive",
        step: Effect.sync(() => lines.forEachWaiting(({ message }) => message.working())),
        every: Duration.millis(LINE_KEEPALIVE_MS)
      })
    )
    const worker = Effect.forever(Effect.flatMap(Queue.take(inbox), handle))
    // One fiber over all the workers, so a shutdown interrupts them all at once. Forked one by one, they were
    // interrupted one after the other, each awaited through its attempt under way, while the others went on
    // taking the next jobs of their lines: a slow endpoint held a SIGTERM for minutes (found by the chaos run).
    yield* Effect.forkScoped(
      Effect.all(
        Array.from({ length: workers }, () => worker),
        { concurrency: "unbounded", discard: true }
      )
    )
  })
)

/** A message whose handling failed (the database did not answer, say) is offered again after this long. */
export const DISPATCH_ERROR_DELAY_MS = 1_000
