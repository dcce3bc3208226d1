import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { runWorker, Worker, workerLoop } from "../../../services/platform/Worker"

describe("the worker helper", () => {
  it.scoped("runs a pass, then one every interval, and goes on after a failed pass", () =>
    Effect.gen(function* () {
      const passes: Array<number> = []
      let n = 0
      const step = Effect.suspend(() => {
        n += 1
        passes.push(n)
        return n === 2 ? Effect.fail("boom") : Effect.succeed(n)
      })
      yield* Layer.build(runWorker({ name: "Test.step", step, every: "1 second" }))
      yield* Effect.yieldNow()
      assert.deepStrictEqual(passes, [1])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(passes, [1, 2])
      // The failed pass was logged; the next one comes at the same pace.
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(passes, [1, 2, 3])
    })
  )

  it.scoped("retries a failed pass on its named schedule before the pace", () =>
    Effect.gen(function* () {
      let attempts = 0
      const step = Effect.suspend(() => {
        attempts += 1
        return attempts < 3 ? Effect.fail("not yet") : Effect.succeed(attempts)
      })
      const seen: Array<Option.Option<number>> = []
      const loop = workerLoop({
        name: "Test.retry",
        step,
        retry: Worker.retrySpaced("100 millis", 5),
        every: (result: Option.Option<number>) =>
          Effect.zipRight(
            Effect.sync(() => seen.push(result)),
            Effect.never
          )
      })
      const fiber = yield* Effect.fork(loop)
      yield* TestClock.adjust("100 millis")
      yield* TestClock.adjust("100 millis")
      assert.strictEqual(attempts, 3)
      assert.deepStrictEqual(seen, [Option.some(3)])
      yield* Fiber.interrupt(fiber)
    })
  )

  it.scoped("hands a failed pass to the pace as none", () =>
    Effect.gen(function* () {
      const seen: Array<Option.Option<number>> = []
      const loop = workerLoop({
        name: "Test.none",
        step: Effect.fail("always"),
        every: (result: Option.Option<number>) =>
          Effect.zipRight(
            Effect.sync(() => seen.push(result)),
            Effect.never
          )
      })
      const fiber = yield* Effect.fork(loop)
      yield* Effect.yieldNow()
      assert.deepStrictEqual(seen, [Option.none()])
      yield* Fiber.interrupt(fiber)
    })
  )
})
