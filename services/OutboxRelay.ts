import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer } from "effect"
import { Bus } from "./Bus"
import { Ids } from "./Ids"
import { Lease } from "./Lease"
import { makeWorkSignal } from "./WorkSignal"

export const RELAY_INTERVAL = Duration.millis(100)

/**
 * Relays lifecycle events from the outbox to delivery jobs, one per active endpoint of the event's account. The
 * outbox row is marked sent in the same transaction as its jobs, and a job exists once per (endpoint, event), so
 * a crash at any point relays it again and duplicates nothing. One instance relays at a time, under a lease.
 */
export const relayOnce = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      const at = new Date(yield* Clock.currentTimeMillis)
      const rows = yield* sql<{ id: string; payload: { event_id: string }; trace_parent: string | null }>`
        select id, payload, trace_parent from outbox
        where published_at is null and topic = 'lifecycle'
        order by id limit 200 for update skip locked`
      for (const row of rows) {
        const endpoints = yield* sql<{ id: string; account_id: string }>`
          select e.id, e.account_id from webhook_endpoints e
          join lifecycle_events ev on ev.account_id = e.account_id
          where ev.id = ${row.payload.event_id} and e.disabled_at is null`
        for (const endpoint of endpoints) {
          yield* sql`
            insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, state, next_attempt_at, created_at,
                                      trace_parent)
            values (${ids.next()}, ${endpoint.account_id}, ${endpoint.id}, ${row.payload.event_id}, false, 'pending', ${at}, ${at},
                    ${row.trace_parent})
            on conflict do nothing`
        }
        yield* sql`update outbox set published_at = ${at} where id = ${row.id}`
      }
      return rows.length
    })
  )
})

/** Published after jobs were relayed: dispatchers on every instance look for due jobs at once. */
export const JOBS_SUBJECT = "deposits.jobs"

export const OutboxRelayLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const lease = yield* Lease
    const bus = yield* Bus
    // Every committed change publishes a notice (for long polls); it may have written outbox rows too.
    const wake = makeWorkSignal()
    yield* bus.listen("deposits.changed.*", () => wake.wake())
    const loop = relayOnce.pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("outbox relay failed", cause), 0)),
      Effect.tap((relayed) => (relayed > 0 ? bus.notify(JOBS_SUBJECT, String(relayed)) : Effect.void)),
      // Drain without pausing while there is work; otherwise idle until a notice or the interval.
      Effect.flatMap((relayed) => (relayed > 0 ? Effect.void : wake.idle(Duration.toMillis(RELAY_INTERVAL)))),
      Effect.forever
    )
    yield* Effect.forkScoped(lease.whileHolding("outbox-relay", Effect.asVoid(loop)))
  })
)
