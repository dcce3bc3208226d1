import { it } from "@effect/vitest"
import { Effect, Exit, Tracer } from "effect"
import { describe, expect } from "vitest"
import {
  currentFiber,
  currentTraceParent,
  startSpan,
  traceParentOf,
  withHandSpan
} from "../../../services/platform/TraceContext"

/** The default tracer, keeping every span it makes. */
const recording = () => {
  const made: Array<Tracer.Span> = []
  const base = Effect.runSync(Effect.tracer)
  const tracer = Tracer.make({
    span: (...args) => {
      const span = base.span(...args)
      made.push(span)
      return span
    },
    context: (f, fiber) => base.context(f, fiber)
  })
  return { made, tracer }
}

describe("spans made by hand", () => {
  it.effect(
    "are the fiber tracer's spans, under the parent given, with their attributes, ended with the exit",
    () =>
      Effect.gen(function* () {
        const { made, tracer } = recording()
        const [outer, hand, after] = yield* Effect.gen(function* () {
          const outer = yield* Effect.currentSpan
          const fiber = yield* currentFiber
          const hand = startSpan(fiber, "DepositRequest.step", fiber.currentSpan, { "event.type": "x" })
          const after = yield* Effect.currentSpan
          hand!.end(Exit.die("boom"))
          return [outer, hand!.span, after] as const
        }).pipe(Effect.withSpan("outer"), Effect.withTracer(tracer))
        expect(made.map((s) => s.name)).toEqual(["outer", "DepositRequest.step"])
        expect(hand.parent._tag === "Some" && hand.parent.value.spanId).toBe(outer.spanId)
        expect(hand.traceId).toBe(outer.traceId)
        expect(hand.attributes.get("event.type")).toBe("x")
        expect(hand.status._tag).toBe("Ended")
        const status = hand.status as Extract<Tracer.SpanStatus, { _tag: "Ended" }>
        expect(Exit.isFailure(status.exit)).toBe(true)
        expect(status.endTime >= status.startTime).toBe(true)
        // Nothing runs inside it: the fiber's current span is still the outer one.
        expect(after).toBe(outer)
        expect(traceParentOf(hand)).toBe(`00-${outer.traceId}-${hand.spanId}-01`)
      })
  )

  it.effect("wrap an effect under the current span and end with its exit, success or failure", () =>
    Effect.gen(function* () {
      const { made, tracer } = recording()
      const outer = yield* Effect.gen(function* () {
        const outer = yield* Effect.currentSpan
        const seen = yield* withHandSpan("ok", { n: 1 }, (span) => Effect.succeed(span))
        expect(seen).toBe(made[1])
        const failed = yield* Effect.exit(withHandSpan("fails", {}, () => Effect.fail("no")))
        expect(Exit.isFailure(failed)).toBe(true)
        return outer
      }).pipe(Effect.withSpan("outer"), Effect.withTracer(tracer))
      expect(made.map((s) => s.name)).toEqual(["outer", "ok", "fails"])
      for (const span of made.slice(1)) {
        expect(span.parent._tag === "Some" && span.parent.value.spanId).toBe(outer.spanId)
        expect(span.status._tag).toBe("Ended")
      }
      const exitOf = (s: Tracer.Span) => (s.status as Extract<Tracer.SpanStatus, { _tag: "Ended" }>).exit
      expect(Exit.isSuccess(exitOf(made[1]!))).toBe(true)
      expect(Exit.isFailure(exitOf(made[2]!))).toBe(true)
    })
  )

  it.effect("are not made when the fiber has tracing off", () =>
    Effect.gen(function* () {
      const { made, tracer } = recording()
      const hand = yield* Effect.map(currentFiber, (fiber) => startSpan(fiber, "x", undefined, {})).pipe(
        Effect.withTracer(tracer),
        Effect.withTracerEnabled(false)
      )
      expect(hand).toBeUndefined()
      expect(made).toEqual([])
    })
  )

  it.effect(
    "give rows a parent only when tracing is on (with it off, spans are no-ops whose ids read noop)",
    () =>
      Effect.gen(function* () {
        const { tracer } = recording()
        const traced = yield* currentTraceParent.pipe(Effect.withSpan("commit"), Effect.withTracer(tracer))
        expect(traced).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
        expect(yield* currentTraceParent).toBeNull()
        const off = yield* currentTraceParent.pipe(Effect.withSpan("commit"), Effect.withTracerEnabled(false))
        expect(off).toBeNull()
      })
  )
})
