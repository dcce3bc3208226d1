import { type Cause, Effect, Exit, Runtime } from "effect"

/**
 * Group commit for one process: calls that arrive while `maxInFlight` round trips for their key are under way
 * wait and then share the next one. Under load one round trip serves up to `maxBatch` callers, which is what lets
 * many small writes share one commit.
 *
 * A key's first round trip starts once the event loop has run the I/O callbacks it is in (`setImmediate`), not
 * at once: requests read from several sockets in one pass of the loop then share it, where before the first of
 * them went alone and the rest queued behind it. An idle key's call waits for nothing but the end of that pass.
 *
 * `run` gets the batch in arrival order and answers one result per item, in the same order. A round trip of
 * several items that fails is split in halves and each half run again, down to single items: one member's input
 * (a value the database refuses) must not fail the others that shared its statement. A single item's failure is
 * its own caller's. `run` must therefore be safe to repeat for items whose round trip failed (one statement, or
 * one transaction, that rolled back whole).
 */
export const makeBatcher = <A, B, E>(options: {
  readonly maxBatch: number
  readonly maxInFlight: number
  readonly run: (key: string, batch: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
  /**
   * Whether a failure may be one member's doing and so worth splitting the batch for (default: every failure).
   * A failure that is nobody's input (no connection) fails the whole batch at once: halves would only meet it again.
   */
  readonly isolate?: (cause: Cause.Cause<E>) => boolean
}) => {
  const isolate = options.isolate ?? (() => true)
  /**
   * A caller's place in the queue: its outcome lands in `exit`, or goes straight to `resume` once the caller is
   * waiting. A plain object and `Effect.async` rather than a `Deferred` each: making a Deferred spreads a prototype
   * and adds properties after it, twice in every create (README: Decisions).
   */
  interface Waiting {
    readonly item: A
    exit: Exit.Exit<B, E> | undefined
    resume: ((exit: Exit.Exit<B, E>) => void) | undefined
  }
  interface KeyQueue {
    readonly waiting: Array<Waiting>
    inFlight: number
  }
  const queues = new Map<string, KeyQueue>()

  const settle = (w: Waiting, exit: Exit.Exit<B, E>) => {
    if (w.resume === undefined) w.exit = exit
    else w.resume(exit)
  }

  const runBatch = (key: string, batch: ReadonlyArray<Waiting>): Effect.Effect<void> =>
    options
      .run(
        key,
        batch.map((w) => w.item)
      )
      .pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          if (Exit.isFailure(exit) && batch.length > 1 && isolate(exit.cause)) {
            const half = Math.ceil(batch.length / 2)
            return Effect.zipRight(runBatch(key, batch.slice(0, half)), runBatch(key, batch.slice(half)))
          }
          for (let i = 0; i < batch.length; i++) {
            settle(
              batch[i]!,
              Exit.isSuccess(exit) ? Exit.succeed(exit.value[i] as B) : Exit.failCause(exit.cause)
            )
          }
          return Effect.void
        })
      )

  const drain = (key: string, queue: KeyQueue): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (queue.waiting.length === 0) {
        queue.inFlight--
        if (queue.inFlight === 0) queues.delete(key)
        return Effect.void
      }
      const batch = queue.waiting.splice(0, options.maxBatch)
      return Effect.zipRight(runBatch(key, batch), drain(key, queue))
    })

  /** Waits for the caller's outcome; an interrupted caller just stops listening (its item still runs). */
  const outcome = (w: Waiting) =>
    Effect.async<B, E>((resume) => {
      if (w.exit !== undefined) return resume(w.exit)
      w.resume = resume
    })

  const submit = (key: string, item: A): Effect.Effect<B, E> =>
    Effect.withFiberRuntime((fiber, status) => {
      const waiting: Waiting = { item, exit: undefined, resume: undefined }
      let queue = queues.get(key)
      if (queue === undefined) {
        queue = { waiting: [], inFlight: 0 }
        queues.set(key, queue)
      }
      queue.waiting.push(waiting)
      if (queue.inFlight < options.maxInFlight) {
        queue.inFlight++
        // A fiber of its own with the caller's services and fiber refs, as `forkDaemon` would make it: the round
        // trip serves other callers too, so one caller's interruption must not cancel it. Started from the
        // event loop's check phase (`setImmediate`) rather than forked and then made to wait for it.
        const runtime = Runtime.make({
          context: fiber.currentContext,
          runtimeFlags: status.runtimeFlags,
          fiberRefs: fiber.getFiberRefs()
        })
        const started = queue
        setImmediate(() => Runtime.runFork(runtime, drain(key, started)))
      }
      return outcome(waiting)
    })

  return { submit } as const
}
