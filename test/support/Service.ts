import { HttpServer } from "@effect/platform"
import { type Clock, FiberRef, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { ApiSettings, type AppConfigShape, defaultSettings, settingsLayer } from "../../src/app/Config"
import { withSandboxTreasury } from "../../src/app/SandboxStart"
import type { WebhookTrust } from "../../services/webhooks/HttpsWebhookSender"
import type { WebhookResolver } from "../../services/webhooks/WebhookUrlRules"
import { type AppLive, makeApp } from "../../src/app/Server"
import { createTestDatabase } from "./Database"
import { freePort } from "./Process"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"

export interface RunningService {
  readonly baseUrl: string
  /** The service's own runtime, to reach its services (the actor host, say) from a test. */
  readonly runtime: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<typeof AppLive>, unknown>
  readonly databaseUrl: string
  readonly request: (path: string, init?: RequestInit) => Promise<Response>
  readonly stop: () => Promise<void>
}

/** What HTTP-only test helpers need of a service: where it is, and a request to it. */
export type HttpTarget = Pick<RunningService, "baseUrl" | "request">

/** A service reached over HTTP only (spawned as a process, or another instance). */
export const httpTarget = (baseUrl: string): HttpTarget => ({
  baseUrl,
  request: (path, init) => fetch(`${baseUrl}${path}`, init)
})

/** The whole service on a random port against a fresh database on the real PostgreSQL. */
export const startService = async (
  options: {
    readonly config?: Partial<AppConfigShape>
    readonly database?: { url: string; drop: () => Promise<void> }
    readonly clock?: Clock.Clock
    readonly tracer?: boolean
    /** Where the service's spans go (an in-memory exporter's processor); the tracer is on only with one. */
    readonly spanProcessor?: SpanProcessor
    /** The network webhook deliveries see (a local HTTPS receiver in tests). */
    readonly webhookNetwork?: Layer.Layer<WebhookResolver | WebhookTrust>
  } = {}
): Promise<RunningService> => {
  const database = options.database
  const db = database ?? (await createTestDatabase())
  // A port chosen here rather than by the server: the links the service hands out (checkout, uploads, downloads)
  // are made from its settings, so they must name the port it will listen on.
  const port = options.config?.port ?? (await freePort())
  const config = withSandboxTreasury(
    defaultSettings({
      databaseUrl: Option.some(Redacted.make(db.url)),
      port,
      publicBaseUrl: Option.some(`http://127.0.0.1:${port}`),
      ...options.config
    })
  )
  const configured = makeApp(options.webhookNetwork, options.spanProcessor).pipe(
    Layer.provide(ApiSettings.Default),
    Layer.provide(settingsLayer(config))
  )
  const app =
    options.tracer === false ? Layer.locally(configured, FiberRef.currentTracerEnabled, false) : configured
  const runtime = ManagedRuntime.make(
    options.clock ? app.pipe(Layer.provide(Layer.setClock(options.clock))) : app
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`
  return {
    ...httpTarget(baseUrl),
    runtime: runtime as never,
    databaseUrl: db.url,
    stop: async () => {
      await runtime.dispose()
      if (database === undefined) await db.drop()
    }
  }
}
