import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { SqlClient } from "@effect/sql"
import { Config, Effect, Layer, Option, Runtime } from "effect"
import { ChainEndpoints } from "../../services/chain/ChainEndpoints"
import { StepHistory } from "../../services/depositRequests/StepHistory"
import { depositRequestStatuses } from "../../services/domain/Lifecycle"
import { ChangeFeed } from "../../services/platform/ChangeFeed"
import { Metrics } from "../../services/platform/Metrics"

/**
 * `METRICS_PORT` (unset: no metrics endpoint) and `METRICS_HOST` (default 127.0.0.1): the operator's Prometheus
 * endpoint and all-accounts step feed, on their own port outside `/v1`, so they are never on the public interface
 * unless an operator puts them there.
 */
export const metricsServerSettings = Config.all({
  metricsPort: Config.option(Config.port("METRICS_PORT")),
  metricsHost: Config.string("METRICS_HOST").pipe(Config.withDefault("127.0.0.1"))
})

/** What `/inspector/steps` was asked, or why it cannot answer. */
type FeedQuery =
  | {
      readonly after: bigint | undefined
      readonly status: string | undefined
      readonly limit: number
      readonly wait: boolean
      readonly timeoutMs: number
    }
  | { readonly error: string }

const digits = (value: string | null, min: number, max: number, fallback: number) => {
  if (value === null) return fallback
  const n = /^(0|[1-9]\d{0,8})$/.test(value) ? Number(value) : Number.NaN
  return n >= min && n <= max ? n : undefined
}

/** The all-accounts feed's parameters: those of `/v1/lifecycle/steps`, with the same bounds. */
export const feedQueryOf = (url: URL): FeedQuery => {
  const p = url.searchParams
  const after = p.get("after")
  if (after !== null && !/^(0|[1-9]\d{0,17})$/.test(after)) return { error: "after: must be a cursor" }
  const status = p.get("status")
  if (status !== null && !(depositRequestStatuses as ReadonlyArray<string>).includes(status))
    return { error: "status: must be a deposit request status" }
  const waitFor = p.get("wait_for")
  if (waitFor !== null && waitFor !== "change") return { error: "wait_for: must be change" }
  const limit = digits(p.get("limit"), 1, 200, 50)
  if (limit === undefined) return { error: "limit: must be 1 to 200" }
  const timeout = digits(p.get("timeout"), 1, 30, 25)
  if (timeout === undefined) return { error: "timeout: must be 1 to 30" }
  return {
    after: after === null ? undefined : BigInt(after),
    status: status ?? undefined,
    limit,
    wait: waitFor === "change",
    timeoutMs: timeout * 1000
  }
}

/**
 * `GET /inspector/steps`: every account's steps, live (the operators' view of the inspector, infra/decisions/
 * 0066-step-history.md). Only here, on the operator's port, never under `/v1`: no merchant key or session reaches it.
 */
const makeInspectorFeed = Effect.gen(function* () {
  const history = yield* StepHistory
  const feed = yield* ChangeFeed
  const run = Runtime.runPromise(yield* Effect.runtime<never>())
  const read = (q: Exclude<FeedQuery, { error: string }>) =>
    run(history.feed({ accountId: undefined, after: q.after, status: q.status, limit: q.limit }))
  /** Resolves on the next step in any account, a step already past `cursor`, or the timeout. */
  const nextStep = (cursor: bigint, timeoutMs: number, response: ServerResponse) =>
    new Promise<void>((resolve) => {
      let cancel = () => {}
      const done = () => {
        clearTimeout(timer)
        cancel()
        response.off("close", done)
        resolve()
      }
      const timer = setTimeout(done, timeoutMs)
      cancel = feed.subscribeAnyStep(done)
      response.once("close", done)
      run(history.feedHasAfter(undefined, cursor)).then((newer) => newer && done(), done)
    })
  return async (url: URL, response: ServerResponse) => {
    const q = feedQueryOf(url)
    if ("error" in q) {
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: q.error }))
      return
    }
    let page = await read(q)
    if (q.wait && page.data.length === 0) {
      await nextStep(BigInt(page.next_cursor), q.timeoutMs, response)
      if (response.destroyed) return
      page = await read(q)
    }
    response
      .writeHead(200, { "content-type": "application/json", "cache-control": "no-store" })
      .end(JSON.stringify({ object: "list", ...page }))
  }
})

const hostOf = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return "unknown"
  }
}

/**
 * Serves `GET /metrics` in Prometheus text format, reading the backlogs from PostgreSQL at each scrape, and
 * `GET /inspector/steps`, the all-accounts step feed.
 */
export const MetricsServerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const { metricsPort, metricsHost } = yield* metricsServerSettings
    if (Option.isNone(metricsPort)) return
    const metrics = yield* Metrics
    const sql = yield* SqlClient.SqlClient
    const { access } = yield* ChainEndpoints
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
      // Every instance reports the token's pause as the treasury (on one instance) last recorded it.
      const [token] = yield* sql<{ paused: boolean }>`select bool_or(paused) as paused from token_status`
      metrics.tokenPaused.set(token?.paused === true ? 1 : 0)
      // Read through a partial index of the paused requests only, so a scrape never walks the history.
      const paused = yield* sql<{ code: string; n: string }>`
        select coalesce(snapshot #>> '{context,attention,code}', 'unknown') as code, count(*)::text as n
        from deposit_requests where status = 'needs_attention' group by 1`
      metrics.needingAttention.reset()
      for (const row of paused) metrics.needingAttention.set({ code: row.code }, Number(row.n))
      if (Option.isSome(access)) {
        const now = Date.now()
        access.value.health().forEach((e, i) => {
          // The host only: an RPC URL's path or query often holds the provider's key.
          const labels = { endpoint: String(i + 1), host: hostOf(e.url) }
          metrics.rpcEndpointUp.set(labels, e.coolingUntil > now || e.lagging ? 0 : 1)
          metrics.rpcEndpointFailures.set(labels, e.failures)
        })
      }
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("metrics: reading the backlogs failed", cause)))
    const inspectorFeed = yield* makeInspectorFeed
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? "/", "http://operator")
      if (request.method === "GET" && url.pathname === "/inspector/steps") {
        inspectorFeed(url, response).catch(() => {
          if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" })
          response.end("inspector feed failed\n")
        })
        return
      }
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
    yield* Effect.logInfo(
      `metrics on http://${metricsHost}:${metricsPort.value}/metrics, every account's steps on /inspector/steps`
    )
  })
)
