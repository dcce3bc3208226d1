import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { makeWorkSignal } from "../../../services/platform/WorkSignal"

describe("the work signal", () => {
  it.live("wakeOne resumes one idler and leaves the others waiting; wake resumes them all", () =>
    Effect.gen(function* () {
      const signal = makeWorkSignal()
      const idlers = yield* Effect.forEach([1, 2, 3], () => Effect.fork(signal.idle(60_000)))
      yield* Effect.yieldNow()
      signal.wakeOne()
      yield* Effect.sleep(20)
      const afterOne = yield* Effect.forEach(idlers, (f) => Effect.map(f.poll, (o) => o._tag === "Some"))
      signal.wake()
      yield* Effect.forEach(idlers, Fiber.join)
      expect(afterOne).toEqual([true, false, false])
    })
  )

  it.live("keeps a wake that found nobody idle for the next idle", () =>
    Effect.gen(function* () {
      const signal = makeWorkSignal()
      signal.wakeOne()
      const started = Date.now()
      yield* signal.idle(60_000)
      expect(Date.now() - started).toBeLessThan(1_000)
    })
  )
})
