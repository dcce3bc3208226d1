import { Deferred, Effect, Exit, FiberId } from "effect"

/**
 * Group commit for one process: calls that arrive while `maxInFlight` round trips for their key are under way
 * wait and then share the next one. An idle key answers at once (a batch of one, no added wait); under load one
 * round trip serves up to `maxBatch` callers, which is what lets many small writes share one commit.
 *
 * `run` gets the batch in arrival order and answers one result per item, in the same order. A failed round trip
 * fails every caller that shared it, with the same cause.
 */
export const makeBatcher = <A, B, E>(options: {
  readonly maxBatch: number
  readonly maxInFlight: number
  readonly run: (key: string, batch: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
}) => {
  interface Waiting {
    readonly item: A
    readonly result: Deferred.Deferred<B, E>
  }
  interface KeyQueue {
    readonly waiting: Array<Waiting>
    inFlight: number
  }
  const queues = new Map<string, KeyQueue>()

  const runBatch = (key: string, batch: ReadonlyArray<Waiting>) =>
    options
      .run(
        key,
        batch.map((w) => w.item)
      )
      .pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          for (const [i, w] of batch.entries()) {
            Deferred.unsafeDone(
              w.result,
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

  const submit = (key: string, item: A): Effect.Effect<B, E> =>
    Effect.suspend(() => {
      const result = Deferred.unsafeMake<B, E>(FiberId.none)
      let queue = queues.get(key)
      if (queue === undefined) {
        queue = { waiting: [], inFlight: 0 }
        queues.set(key, queue)
      }
      queue.waiting.push({ item, result })
      if (queue.inFlight >= options.maxInFlight) return Deferred.await(result)
      queue.inFlight++
      // A daemon: the round trip serves other callers too, so one caller's interruption must not cancel it.
      return Effect.zipRight(Effect.forkDaemon(drain(key, queue)), Deferred.await(result))
    })

  return { submit } as const
}
