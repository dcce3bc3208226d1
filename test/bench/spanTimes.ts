import { Tracer } from "effect"

/**
 * The default tracer, telling `onEnd` when a span named in `names` ends (its attributes complete by then: a
 * statement's text is set after its span starts) and how long it took, in milliseconds.
 */
export const spanTimesTracer = (
  base: Tracer.Tracer,
  names: ReadonlySet<string>,
  onEnd: (span: Tracer.Span, ms: number, startTime: bigint, endTime: bigint) => void
) =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = base.span(name, parent, context, links, startTime, kind, options)
      if (!names.has(name)) return span
      const end = span.end.bind(span)
      ;(span as { end: Tracer.Span["end"] }).end = (endTime, exit) => {
        onEnd(span, Number(endTime - startTime) / 1e6, startTime, endTime)
        end(endTime, exit)
      }
      return span
    },
    context: (f, fiber) => base.context(f, fiber)
  })
