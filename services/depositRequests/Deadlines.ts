import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { ActorHost } from "../actors/ActorHost"
import { runWorker } from "../platform/Worker"

/** How often the scheduler looks for deadlines that passed. */
export const SCHEDULER_INTERVAL = Duration.seconds(1)

/**
 * Deadlines are durable because they are the rows' own `expires_at`: the scheduler (one instance, under a lease)
 * finds open requests whose deadline passed and sends each `deadline.reached` with a deterministic event id, so a
 * restart or a second scheduler never applies it twice.
 */
export const sweepDeadlines = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const host = yield* ActorHost
  const now = new Date(yield* Clock.currentTimeMillis)
  const due = yield* sql<{ id: string }>`
    select id from deposit_requests
    where status in ('awaiting_payer', 'ready', 'partially_deposited') and expires_at <= ${now}
    order by expires_at limit 200`
  for (const { id } of due) {
    yield* host
      .apply(id, `deadline:${id}`, { type: "deadline.reached", at: now.toISOString() })
      .pipe(Effect.catchAllCause((cause) => Effect.logError(`deadline of ${id} not applied`, cause)))
  }
  return due.length
})

/** The deadline sweep, one instance at a time under the `scheduler` lease. */
export const SchedulerLive = runWorker({
  name: "Deadlines.sweep",
  lease: "scheduler",
  step: sweepDeadlines,
  every: SCHEDULER_INTERVAL,
  failure: "deadline sweep failed"
})
