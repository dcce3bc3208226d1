import { createServer } from "node:http"
import { SqlClient } from "@effect/sql"
import { Config, Effect, Layer, Option, Runtime } from "effect"
import { Metrics } from "../services/platform/Metrics"

/**
 * `METRICS_PORT` (unset: no metrics endpoint) and `METRICS_HOST` (default 127.0.0.1): the operator's Prometheus
 * endpoint, on its own port outside `/v1`, so it is never on the public interface unless an operator puts it there.
 */
export const metricsServerSettings = Config.all({
  metricsPort: Config.option(Config.port("METRICS_PORT")),
  metricsHost: Config.string("METRICS_HOST").pipe(Config.withDefault("127.0.0.1"))
})

/** Serves `GET /metrics` in Prometheus text format, reading the backlogs from PostgreSQL at each scrape. */
export const MetricsServerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const { metricsPort, metricsHost } = yield* metricsServerSettings
    if (Option.isNone(metricsPort)) return
    const metrics = yield* Metrics
    const sql = yield* SqlClient.SqlClient
    const run = Runtime.runPromise(yield* Effect.runtime<never>())
    const refresh = Effect.gen(function* () {
      const outbox = yield* sql<{ topic: string; n: string }>`
        select topic, count(*)::text as n from outbox where published_at is null group by topic`
      metrics.outboxBacklog.reset()
      for (const row of outbox) metrics.outboxBacklog.set({ topic: row.topic }, Number(row.n))
      const [jobs] = yield* sql<{
        n: string
      }>`select count(*)::text as n from webhook_jobs where state = 'pending'`
      metrics.webhookBacklog.set(Number(jobs?.n ?? 0))
      const [transfers] = yield* sql<{ n: string; oldest: Date | null }>`
        select count(*)::text as n, min(signed_at) as oldest from transfers where state = 'signed'`
      metrics.pendingTransfers.set(Number(transfers?.n ?? 0))
      const oldest = transfers?.oldest ?? null
      metrics.oldestPendingTransfer.set(oldest === null ? 0 : (Date.now() - oldest.getTime()) / 1000)
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("metrics: reading the backlogs failed", cause)))
    const server = createServer((request, response) => {
      if (request.method !== "GET" || request.url !== "/metrics") {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
        return
      }
      run(refresh)
        .then(() => metrics.registry.metrics())
        .then(
          (text) => response.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
          () => response.writeHead(500, { "content-type": "text/plain" }).end("metrics failed\n")
        )
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen(metricsPort.value, metricsHost, () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
        })
    )
    yield* Effect.logInfo(`metrics on http://${metricsHost}:${metricsPort.value}/metrics`)
  })
)
