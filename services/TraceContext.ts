import { Effect, Option, Tracer } from "effect"

/**
 * Trace context carried by rows: the W3C `traceparent` of the span that wrote a row, and a link to it for the span
 * that later does the work the row asks for. Work done later is its own trace (a delivery retried for hours
 * should not stretch the request's trace), linked to the one that caused it.
 */

/** The current span as a `traceparent` (`00-<trace id>-<span id>-<flags>`), or null outside any span. */
export const currentTraceParent: Effect.Effect<string | null> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) =>
    Option.match(span, {
      onNone: () => null,
      onSome: (s) => `00-${s.traceId}-${s.spanId}-${s.sampled ? "01" : "00"}`
    })
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
