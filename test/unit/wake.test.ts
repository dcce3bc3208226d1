import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeWake } from "../../services/Wake"

describe("Wake", () => {
  it("wakeOne resumes one idler and leaves the others waiting; wake resumes them all", async () => {
    const wake = makeWake()
    const woken = await Effect.runPromise(
      Effect.gen(function* () {
        const idlers = yield* Effect.forEach([1, 2, 3], () => Effect.fork(wake.idle(60_000)))
        yield* Effect.yieldNow()
        wake.wakeOne()
        yield* Effect.sleep(20)
        const afterOne = yield* Effect.forEach(idlers, (f) => Effect.map(f.poll, (o) => o._tag === "Some"))
        wake.wake()
        yield* Effect.forEach(idlers, Fiber.join)
        return afterOne
      })
    )
    expect(woken).toEqual([true, false, false])
  })

  it("keeps a wake that found nobody idle for the next idle", async () => {
    const wake = makeWake()
    wake.wakeOne()
    const started = Date.now()
    await Effect.runPromise(wake.idle(60_000))
    expect(Date.now() - started).toBeLessThan(1_000)
  })
})
