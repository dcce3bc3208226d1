import { Cause, Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeBatcher } from "../../../services/platform/Batcher"

describe("Batcher", () => {
  it("runs an idle key's call alone, then lets callers that waited share one round trip, in order", async () => {
    const batches: Array<ReadonlyArray<number>> = []
    const gate = Effect.runSync(Deferred.make<void>())
    const started = Effect.runSync(Deferred.make<void>())
    const batcher = makeBatcher({
      maxBatch: 100,
      maxInFlight: 1,
      run: (_key, batch: ReadonlyArray<number>) =>
        Effect.gen(function* () {
          batches.push(batch)
          if (batches.length === 1) {
            yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(gate)
          }
          return batch.map((n) => n * 10)
        })
    })
    const results = await Effect.runPromise(
      Effect.gen(function* () {
        const first = yield* Effect.fork(batcher.submit("a", 1))
        yield* Deferred.await(started)
        const rest = yield* Effect.fork(
          Effect.all(
            [2, 3, 4].map((n) => batcher.submit("a", n)),
            { concurrency: "unbounded" }
          )
        )
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        return [yield* first.await, yield* rest.await]
      })
    )
    expect(batches).toEqual([[1], [2, 3, 4]])
    expect(results[0]).toEqual(Exit.succeed(10))
    expect(results[1]).toEqual(Exit.succeed([20, 30, 40]))
  })

  it("lets calls made in separate callbacks of one event-loop pass share the first round trip", async () => {
    const batches: Array<ReadonlyArray<number>> = []
    const batcher = makeBatcher({
      maxBatch: 100,
      maxInFlight: 4,
      run: (_key, batch: ReadonlyArray<number>) => {
        batches.push(batch)
        return Effect.succeed(batch)
      }
    })
    // Two callbacks of one check phase run in one pass of the loop, each followed by its own microtasks: the way
    // requests read from two sockets in one poll arrive. (Two 0 ms timers made in different milliseconds could fall
    // into different passes; immediates queued together cannot.)
    const results = await Promise.all(
      [1, 2].map(
        (n) =>
          new Promise<number>((resolve, reject) => {
            setImmediate(() => Effect.runPromise(batcher.submit("a", n)).then(resolve, reject))
          })
      )
    )
    expect(results).toEqual([1, 2])
    expect(batches).toEqual([[1, 2]])
  })

  it("keeps keys apart and fails the callers whose items always fail", async () => {
    const batcher = makeBatcher({
      maxBatch: 10,
      maxInFlight: 1,
      run: (key, batch: ReadonlyArray<string>) =>
        key === "bad"
          ? Effect.fail(`refused ${batch.length}`)
          : Effect.succeed(batch.map((s) => `${key}:${s}`))
    })
    const [bad, good] = await Effect.runPromise(
      Effect.all(
        [
          Effect.exit(
            Effect.all([batcher.submit("bad", "x"), batcher.submit("bad", "y")], { concurrency: 2 })
          ),
          Effect.all([batcher.submit("ok", "x"), batcher.submit("ok", "y")], { concurrency: 2 })
        ],
        { concurrency: 2 }
      )
    )
    expect(Exit.isFailure(bad)).toBe(true)
    expect(good).toEqual(["ok:x", "ok:y"])
  })

  it("lets an interrupted caller go without cancelling the round trip it shares", async () => {
    const gate = Effect.runSync(Deferred.make<void>())
    const ran: Array<ReadonlyArray<number>> = []
    const batcher = makeBatcher({
      maxBatch: 10,
      maxInFlight: 1,
      run: (_key, batch: ReadonlyArray<number>) =>
        Effect.gen(function* () {
          ran.push(batch)
          yield* Deferred.await(gate)
          return batch.map((n) => n + 1)
        })
    })
    const [interrupted, other] = await Effect.runPromise(
      Effect.gen(function* () {
        const first = yield* Effect.fork(batcher.submit("a", 1))
        const second = yield* Effect.fork(batcher.submit("a", 2))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(first)
        yield* Deferred.succeed(gate, undefined)
        return [yield* first.await, yield* second.await]
      })
    )
    expect(Exit.isInterrupted(interrupted)).toBe(true)
    expect(other).toEqual(Exit.succeed(3))
    expect(ran).toEqual([[1, 2]])
  })

  it("fails only the member whose item fails a shared round trip; the others commit", async () => {
    const runs: Array<ReadonlyArray<string>> = []
    const batcher = makeBatcher({
      maxBatch: 100,
      maxInFlight: 1,
      run: (_key, batch: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          runs.push(batch)
          // Like a statement PostgreSQL refuses whole for one row's value.
          if (batch.includes("poison")) return yield* Effect.fail(`refused ${batch.join(",")}`)
          return batch.map((s) => s.toUpperCase())
        })
    })
    const items = ["a", "b", "c", "poison", "d", "e", "f", "g"]
    // Submitted in one pass of the event loop, so they share the first round trip.
    const exits = await Effect.runPromise(
      Effect.all(
        items.map((item) => Effect.exit(batcher.submit("k", item))),
        { concurrency: "unbounded" }
      )
    )
    expect(exits.map((exit) => (Exit.isSuccess(exit) ? exit.value : "failed"))).toEqual([
      "A",
      "B",
      "C",
      "failed",
      "D",
      "E",
      "F",
      "G"
    ])
    expect(Exit.isFailure(exits[3]!) && String(Cause.squash(exits[3].cause))).toBe("refused poison")
    // The batch of 8 failed, then halves until the poison stood alone; a clean half went once.
    expect(runs).toEqual([
      items,
      items.slice(0, 4),
      ["a", "b"],
      ["c", "poison"],
      ["c"],
      ["poison"],
      items.slice(4)
    ])
  })
})
