import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import { WEBHOOK_JOBS_SUBJECT, WEBHOOKS_STREAM } from "../../infra/jetstream/Streams"
import { Bus } from "../platform/Bus"
import { EventStream, mayBeLostBefore, REPUBLISH_EVERY } from "../platform/eventStream/EventStream"
import { Ids } from "../platform/Ids"
import { Lease } from "../platform/Lease"
import { workerLoop } from "../platform/Worker"
import { makeWorkSignal } from "../platform/WorkSignal"
import type { RelayRow, UnpublishedJobRow } from "./WebhookRows"

export const RELAY_INTERVAL = Duration.millis(100)
/** Jobs published per pass. */
export const PUBLISH_BATCH = 500

/** What a delivery job's message carries: the job, its endpoint (for the per-endpoint cap) and which publication. */
export const JobMessage = Schema.Struct({
  job_id: Schema.String,
  endpoint_id: Schema.String,
  /** The job row's `publications` when this message was published; a lower number is a stale copy. */
  publication: Schema.Int
})
export type JobMessage = typeof JobMessage.Type

/** Outbox rows relayed per pass. */
export const RELAY_BATCH = 500

/**
 * The relay's read: each due outbox row, locked, once per active endpoint of its event's account whose event filter
 * takes it (none: once, with no endpoint). Hot path: its rows are typed by `RelayRow`, not decoded (about 0.9 ms of
 * CPU a pass of 500); webhookRows.test.ts decodes what it returns on a migrated database.
 */
export const dueOutboxRows = (sql: PgClient.PgClient) =>
  sql<typeof RelayRow.Type>`
    with due as (
      select id, (payload->>'event_id')::uuid as event_id, trace_parent from outbox
      where published_at is null and topic = 'lifecycle'
      order by id limit ${RELAY_BATCH} for update skip locked
    )
    select d.id, d.event_id, d.trace_parent, e.id as endpoint_id, e.account_id, e.listener
    from due d
    left join lifecycle_events ev on ev.id = d.event_id
    left join webhook_endpoints e on e.account_id = ev.account_id and e.disabled_at is null
      and (e.event_types is null or ev.type = any(e.event_types))
    order by d.id, e.id`

/**
 * Relays lifecycle events from the outbox to delivery jobs, one per active endpoint of the event's account whose
 * event filter takes it. A listener's job is marked published at once: its CLI pulls it, the stream never carries
 * it (infra/decisions/0068-local-webhook-forwarding.md). The
 * outbox row is marked sent in the same transaction as its jobs, and a job exists once per (endpoint, event), so
 * a crash at any point relays it again and duplicates nothing. One instance relays at a time, under a lease.
 * Two statements a pass, whatever its size: the rows with their endpoints, then the jobs and the marks together
 * (a statement per row and endpoint held a burst's deliveries to the relay's pace, decision 0035).
 */
export const relayOnce = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      const at = new Date(yield* Clock.currentTimeMillis)
      // Each locked row once, with every active endpoint of its event's account (none: no job, still marked).
      const rows = yield* dueOutboxRows(sql)
      if (rows.length === 0) return 0
      const relayed = [...new Set(rows.map((r) => r.id))]
      const jobs = rows.filter((r) => r.endpoint_id !== null)
      yield* sql`
        with jobs as (
          insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, state, next_attempt_at,
                                    created_at, trace_parent, published_at)
          select j.id, j.account_id, j.endpoint_id, j.event_id, false, 'pending', ${at}, ${at}, j.trace_parent,
            case when j.listener then ${at}::timestamptz end
          from unnest(${jobs.map(() => ids.next())}::uuid[], ${jobs.map((j) => j.account_id)}::uuid[],
                      ${jobs.map((j) => j.endpoint_id)}::uuid[], ${jobs.map((j) => j.event_id)}::uuid[],
                      ${jobs.map((j) => j.trace_parent)}::text[], ${jobs.map((j) => j.listener === true)}::bool[])
            with ordinality as j(id, account_id, endpoint_id, event_id, trace_parent, listener, n)
          order by j.n
          on conflict do nothing
        )
        update outbox set published_at = ${at} where id = any(${relayed}::bigint[])`
      return relayed.length
    })
  )
})

/**
 * Counts up the publication number of the jobs `due` selects and answers them. Hot path, typed by
 * `UnpublishedJobRow` (webhookRows.test.ts decodes what it returns).
 */
export const countPublications = (sql: PgClient.PgClient, due: Statement.Fragment) =>
  sql<typeof UnpublishedJobRow.Type>`
    update webhook_jobs j set publications = j.publications + 1
    from (${due}) d where j.id = d.id
    returning j.id, j.endpoint_id, j.publications`

/**
 * Publishes jobs to the webhook stream. Each job's publication number is counted up and committed first, so the
 * message it then publishes (naming that number) is the job's current one as soon as a dispatcher can see it, and
 * older copies are dropped; `published_at` is written only after the stream's ack. `republish` selects jobs still
 * pending and unattempted since they were due: the stream's store began after their publication (the server came
 * back empty) or they are REPUBLISH_AFTER_MS overdue (a message lost in a crash).
 */
const publishJobs = (republish: boolean) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const stream = yield* EventStream
    const now = yield* Clock.currentTimeMillis
    const before = republish ? yield* mayBeLostBefore(stream, WEBHOOKS_STREAM.name) : undefined
    const due =
      before === undefined
        ? sql`
            select id from webhook_jobs
            where published_at is null and state = 'pending' order by created_at limit ${PUBLISH_BATCH}`
        : sql`
            select id from webhook_jobs
            where state = 'pending' and published_at < ${before} and next_attempt_at < ${before}
              and (locked_until is null or locked_until < ${new Date(now)})
              and endpoint_id not in (select id from webhook_endpoints where listener)
            order by next_attempt_at limit ${PUBLISH_BATCH}`
    const jobs = yield* countPublications(sql, due)
    if (jobs.length === 0) return 0
    yield* stream.publish(
      jobs.map((j) => {
        const body: JobMessage = { job_id: j.id, endpoint_id: j.endpoint_id, publication: j.publications }
        return {
          subject: WEBHOOK_JOBS_SUBJECT,
          data: JSON.stringify(body),
          msgId: `job:${j.id}:${j.publications}`
        }
      })
    )
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* sql`
      update webhook_jobs j set published_at = ${at}
      from unnest(${jobs.map((j) => j.id)}::uuid[], ${jobs.map((j) => j.publications)}::int[]) as p(id, publication)
      where j.id = p.id and j.publications = p.publication`
    return jobs.length
  })

export const publishNewJobs = publishJobs(false)
export const republishLostJobs = publishJobs(true)

export const OutboxRelayLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const lease = yield* Lease
    const bus = yield* Bus
    // Every committed change publishes a notice (for long polls); it may have written outbox rows too.
    const wake = makeWorkSignal()
    yield* bus.listen("deposits.changed.*", () => wake.wake())
    const relay = workerLoop({
      name: "OutboxRelay.relay",
      failure: "outbox relay failed",
      step: Effect.zipWith(relayOnce, publishNewJobs, (relayed, published) => relayed + published),
      // Drain without pausing while there is work; otherwise idle until a notice or the interval.
      every: (moved: Option.Option<number>) =>
        Option.getOrElse(moved, () => 0) > 0 ? Effect.void : wake.idle(Duration.toMillis(RELAY_INTERVAL))
    })
    const republish = workerLoop({
      name: "OutboxRelay.republish",
      failure: "publishing jobs again failed",
      step: republishLostJobs,
      every: REPUBLISH_EVERY
    })
    yield* Effect.forkScoped(
      lease.whileHolding(
        "outbox-relay",
        Effect.all([relay, republish], { concurrency: "unbounded", discard: true })
      )
    )
  })
)
