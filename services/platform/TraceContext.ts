import { Clock, Context, Effect, type Exit, type Fiber, FiberRef, Option, Tracer } from "effect"

/**
 * Trace context carried by rows: the W3C `traceparent` of the span that wrote a row, and a link to it for the span
 * that later does the work the row asks for. Work done later is its own trace (a delivery retried for hours
 * should not stretch the request's trace), linked to the one that caused it.
 */

/** A span as a `traceparent` (`00-<trace id>-<span id>-<flags>`). */
export const traceParentOf = (s: Tracer.AnySpan) => `00-${s.traceId}-${s.spanId}-${s.sampled ? "01" : "00"}`

/**
 * The current span as a `traceparent`, or null outside any span and with tracing off: then `Effect.withSpan` still
 * makes a span, a no-op one whose ids read "noop", and no row should carry it as a parent.
 */
export const currentTraceParent: Effect.Effect<string | null> = Effect.flatMap(
  FiberRef.get(FiberRef.currentTracerEnabled),
  (enabled) =>
    enabled
      ? Effect.map(Effect.option(Effect.currentSpan), (span) =>
          Option.match(span, { onNone: () => null, onSome: traceParentOf })
        )
      : Effect.succeed(null)
)

/** A span made by hand (`startSpan`), ended by `end`. */
export interface HandSpan {
  readonly span: Tracer.Span
  readonly end: (exit: Exit.Exit<unknown, unknown>) => void
}

/**
 * Starts a span by hand, for what a hot path does once per event. `Effect.withSpan` also makes its span the
 * fiber's current one, which copies the fiber's whole context, an order of magnitude dearer than this
 * (decision 0028). Nothing runs inside such a span, so what belongs under it names it as its parent. None when
 * the fiber has tracing off.
 */
export const startSpan = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  name: string,
  parent: Tracer.AnySpan | undefined,
  attributes: Readonly<Record<string, unknown>>
): HandSpan | undefined => {
  if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return undefined
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  const span = fiber.currentTracer.span(
    name,
    Option.fromNullable(parent),
    Context.empty(),
    [],
    clock.unsafeCurrentTimeNanos(),
    "internal"
  )
  for (const key in attributes) span.attribute(key, attributes[key])
  return { span, end: (exit) => span.end(clock.unsafeCurrentTimeNanos(), exit) }
}

/**
 * Runs the effect `f` makes in a span made by hand under the fiber's current span, ended with the effect's exit;
 * `f` gets the span (none with tracing off) to name as the parent of what belongs under it.
 */
export const withHandSpan = <A, E, R>(
  name: string,
  attributes: Readonly<Record<string, unknown>>,
  f: (span: Tracer.Span | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    const hand = startSpan(fiber as Fiber.RuntimeFiber<unknown, unknown>, name, fiber.currentSpan, attributes)
    const effect = f(hand?.span)
    return hand === undefined ? effect : Effect.onExit(effect, (exit) => Effect.sync(() => hand.end(exit)))
  })

/** The fiber running this effect, for `startSpan`. */
export const currentFiber: Effect.Effect<Fiber.RuntimeFiber<unknown, unknown>> = Effect.withFiberRuntime(
  (fiber) => Effect.succeed(fiber as Fiber.RuntimeFiber<unknown, unknown>)
)

/** A span link to the span a stored `traceparent` names (none for null or a malformed value). */
export const linkTo = (traceParent: string | null | undefined): Array<Tracer.SpanLink> => {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceParent ?? "")
  if (match === null) return []
  const [, traceId = "", spanId = "", flags = "00"] = match
  return [
    {
      _tag: "SpanLink",
      span: Tracer.externalSpan({ traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 }),
      attributes: { "link.reason": "caused_by" }
    }
  ]
}

/** Runs `effect` in a span of its own, linked to the span a stored `traceparent` names. */
export const spanCausedBy =
  (name: string, traceParent: string | null | undefined, attributes: Record<string, unknown> = {}) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.withSpan(effect, name, { links: linkTo(traceParent), attributes, root: true })
