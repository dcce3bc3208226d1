import { type Cause, Duration, Effect, Layer, Option, Schedule } from "effect"
import { Lease } from "./Lease"

/**
 * One background worker: a step run again and again, each pass in a `Worker.step` span (attribute `worker.name`),
 * a failed pass retried on a named schedule and then logged (the loop goes on: the next pass is the retry of last
 * resort), and the passes paced by `every`.
 *
 * How a room uses it (after Effect-TS/discord-bot's `Reminders.ts`):
 * ```ts
 * export const SweeperLive = runWorker({
 *   name: "Attachments.sweep",   // the span's worker.name and the failure log's subject
 *   lease: "attachment-sweeper", // optional: only the instance holding this lease runs it
 *   step: attachments.sweep,     // one pass (its services are the layer's requirements)
 *   every: SWEEP_INTERVAL,       // or (result) => an effect that waits, e.g. draining while a pass found work
 *   retry: Worker.retryNever     // optional named Schedule for a failed pass before it is logged
 * })
 * ```
 * A worker with several loops (the watcher's step and its finality recheck, say) runs `workerLoop`s side by side:
 * ```ts
 * run: Effect.all([workerLoop(stepOptions), workerLoop(recheckOptions)], { concurrency: "unbounded", discard: true })
 * ```
 * A worker that needs set-up in its layer's scope first (a bus subscription that wakes it, say) builds the loop with
 * `workerLoop(options)` inside its own `Layer.scopedDiscard` and forks it, under `lease.whileHolding` if a singleton.
 */
export interface WorkerOptions<A, E, R> {
  /** Names the worker in its spans and in its failure log. */
  readonly name: string
  /** When set, the worker runs only while this instance holds the lease of that name. */
  readonly lease?: string
  /** One pass. */
  readonly step: Effect.Effect<A, E, R>
  /**
   * The wait after each pass: a fixed gap, or a wait chosen from what the pass returned (`Option.none()` when it
   * failed), so a worker can drain without pausing while there is work.
   */
  readonly every: Duration.DurationInput | ((result: Option.Option<A>) => Effect.Effect<void>)
  /** Retries of a failed pass before it counts as failed (default: none, the next pass comes at its pace). */
  readonly retry?: Schedule.Schedule<unknown, Cause.Cause<E>>
  /**
   * A shutdown (or a lost lease) lets the pass under way finish: for passes whose writes and side effects must be
   * recorded together (a signed transfer and its row, a moved cursor and its credits).
   */
  readonly finishPassOnShutdown?: boolean
  /** The failure log's message (default `${name} failed`) and level (default error). */
  readonly failure?: string
  readonly failureLevel?: "Error" | "Warning"
}

/** Named retry schedules for a failed pass. */
export const Worker = {
  /** A failed pass is logged at once and the worker waits for its next pass. */
  retryNever: Schedule.recurs(0) as Schedule.Schedule<unknown, unknown>,
  /** A failed pass is tried again after `gap`, up to `times` times, before it is logged. */
  retrySpaced: (gap: Duration.DurationInput, times: number): Schedule.Schedule<unknown, unknown> =>
    Schedule.intersect(Schedule.spaced(gap), Schedule.recurs(times))
} as const

/** The worker's passes, forever: for a worker that forks its own loop (see `runWorker`). */
export const workerLoop = <A, E, R>(options: WorkerOptions<A, E, R>): Effect.Effect<never, never, R> => {
  const { name, every } = options
  const failure = options.failure ?? `${name} failed`
  const log = options.failureLevel === "Warning" ? Effect.logWarning : Effect.logError
  const retried =
    options.retry === undefined
      ? options.step
      : Effect.unsandbox(Effect.retry(Effect.sandbox(options.step), options.retry))
  const step = Effect.fn("Worker.step", { attributes: { "worker.name": name } })(function* () {
    return yield* retried
  })
  const pace =
    typeof every === "function" ? every : (_: Option.Option<A>) => Effect.sleep(Duration.decode(every))
  const pass = (options.finishPassOnShutdown === true ? Effect.uninterruptible(step()) : step()).pipe(
    Effect.map(Option.some),
    Effect.catchAllCause((cause) => Effect.as(log(failure, cause), Option.none<A>())),
    Effect.flatMap(pace)
  )
  return Effect.forever(pass)
}

/**
 * The worker as a layer: its loop forked in the layer's scope (stopped when the scope closes), under its lease when
 * it has one.
 */
export function runWorker<A, E, R>(
  options: WorkerOptions<A, E, R> & { readonly lease: string }
): Layer.Layer<never, never, R | Lease>
export function runWorker<A, E, R>(options: WorkerOptions<A, E, R>): Layer.Layer<never, never, R>
export function runWorker<A, E, R>(options: WorkerOptions<A, E, R>): Layer.Layer<never, never, R | Lease> {
  const loop = workerLoop(options)
  const { lease } = options
  return Layer.scopedDiscard(
    Effect.forkScoped(
      lease === undefined ? loop : Effect.flatMap(Lease, (leases) => leases.whileHolding(lease, loop))
    )
  )
}
