import { NodeSdk } from "@effect/opentelemetry"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Config, FiberRef, Layer, Option } from "effect"
import { optionalSetting } from "../../services/platform/Settings"

/**
 * Traces through Effect's OpenTelemetry integration, exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is
 * set (the collector's base URL; spans go to `<endpoint>/v1/traces`), under `OTEL_SERVICE_NAME`. One trace runs
 * from an HTTP request (its server span continues an incoming `traceparent`) through the actor step and its
 * commit; the work the commit left for later (a webhook delivery, a treasury signing and broadcast) runs in a trace
 * of its own that links back to the commit. With no endpoint, spans are not made at all (the tracer is off).
 */
export const tracingSettings = Config.all({
  otelExporterOtlpEndpoint: optionalSetting("OTEL_EXPORTER_OTLP_ENDPOINT", "must be an http(s) URL", (url) =>
    /^https?:\/\/\S+$/.test(url)
  ),
  otelServiceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("deposit-request-service"))
})

/** Where spans go: the given processor (tests: an in-memory exporter), else OTLP when configured, else nowhere. */
export const spanProcessorOf = (
  settings: Config.Config.Success<typeof tracingSettings>,
  given?: SpanProcessor
): SpanProcessor | undefined =>
  given ??
  Option.match(settings.otelExporterOtlpEndpoint, {
    onNone: () => undefined,
    onSome: (endpoint) =>
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))
  })

/**
 * Wraps the app: with a span processor, the OpenTelemetry SDK is its tracer (spans flushed when the app stops);
 * without one, the tracer is off, so spans cost nothing.
 */
export const tracedBy =
  (spanProcessor: SpanProcessor | undefined, serviceName: string) =>
  <A, E, R>(app: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    spanProcessor === undefined
      ? Layer.locally(app, FiberRef.currentTracerEnabled, false)
      : app.pipe(Layer.provide(NodeSdk.layer(() => ({ resource: { serviceName }, spanProcessor }))))
