import { HttpApiBuilder, HttpApiScalar, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { SandboxAccounts } from "../../services/merchants/SandboxAccounts"
import { Accounts } from "../../services/merchants/Accounts"
import { Members } from "../../services/merchants/Members"
import { AuditLog } from "../../services/merchants/AuditLog"
import { AuditLogSweeperLive } from "../../services/merchants/AuditLogSweeper"
import { MemberNotices, MemberNoticesLive } from "../../services/merchants/MemberNotices"
import { SecurityNotices } from "../../services/merchants/SecurityNotices"
import { ActorHost } from "../../services/actors/ActorHost"
import { ChainEndpoints } from "../../services/chain/ChainEndpoints"
import { ChainReadiness } from "../../services/chain/ChainReadiness"
import { ChainWatcherLive } from "../../services/chain/ChainWatcher"
import { CreditConsumerLive } from "../../services/chain/CreditConsumer"
import { CreditRelayLive } from "../../services/chain/CreditRelay"
import { ChangeFeed } from "../../services/platform/ChangeFeed"
import { DepositRequests } from "../../services/depositRequests/DepositRequests"
import { LifecycleBodiesLive } from "../../services/depositRequests/LifecycleBodiesLive"
import { DatabaseLive } from "../../services/platform/Database"
import { Ids } from "../../services/platform/Ids"
import { KeyVault } from "../../services/chain/KeyVault"
import { Lease } from "../../services/platform/Lease"
import { PayerFlow } from "../../services/payer/PayerFlow"
import { MerchantResourcesLive } from "../../services/merchants/MerchantResources"
import { DepositRequestLedger } from "../../services/depositRequests/DepositRequestLedger"
import { RateLimiter } from "../../services/platform/RateLimiter"
import { Reconciliation } from "../../services/depositRequests/Reconciliation"
import { RequestExport } from "../../services/depositRequests/RequestExport"
import { StepHistory } from "../../services/depositRequests/StepHistory"
import { AccountSummary } from "../../services/depositRequests/AccountSummary"
import { StepHistorySweeperLive } from "../../services/depositRequests/StepHistorySweeper"
import { OutboxRelayLive } from "../../services/webhooks/OutboxRelay"
import { SchedulerLive } from "../../services/depositRequests/Deadlines"
import { TreasuryLive } from "../../services/treasury/Treasury"
import { WebhookDispatcherLive } from "../../services/webhooks/WebhookDispatcher"
import { WebhookListeners, WebhookListenerSweepLive } from "../../services/webhooks/WebhookListeners"
import { WebhookEndpoints } from "../../services/webhooks/WebhookEndpoints"
import { WebhookSenderLive, WebhookTrust } from "../../services/webhooks/HttpsWebhookSender"
import { WebhookResolver, WebhookUrlCheck } from "../../services/webhooks/WebhookUrlRules"
import { Api } from "../http/Api"
import { AccountLive } from "../http/Account/Http"
import { MembersLive } from "../http/Members/Http"
import { AuditLogLive } from "../http/AuditLog/Http"
import { SignInLive } from "../http/SignIn/Http"
import { DepositRequestsLive } from "../http/DepositRequests/Http"
import { CustomersLive, IssuersLive, PayoutAddressesLive } from "../http/Records/Http"
import { EventsLive, WebhooksLive } from "../http/Webhooks/Http"
import { WebhookListenersLive } from "../http/WebhookListeners/Http"
import { HealthLive } from "../http/Health/Http"
import { PayerLive } from "../http/Payer/Http"
import { PasskeySignInLive, PasskeysLive } from "../http/Passkeys/Http"
import { Passkeys } from "../../services/merchants/Passkeys"
import { ReconciliationLive } from "../http/Reconciliation/Http"
import { ExportsLive } from "../http/Exports/Http"
import { MachineLive } from "../http/Machine/Http"
import { StepsLive } from "../http/Steps/Http"
import { ApiSettings } from "./Config"
import { AuthenticationLive } from "../http/middleware/Authentication"
import { answerClientErrors } from "../http/middleware/ClientError"
import { EdgeLive } from "../http/edge/Edge"
import { MetricsServerLive } from "./MetricsServer"
import { AttachmentsLive } from "../http/Attachments/Http"
import { ObjectRoutesLive } from "../http/ObjectRoutes"
import { HomeRouteLive } from "../web/home/HomeRoute"
import { ErrorDocsRouteLive } from "../web/docs/ErrorDocsRoute"
import { CheckoutRoutesLive } from "../web/checkout/CheckoutRoutes"
import { DashboardRoutesLive } from "../web/dashboard/DashboardRoutes"
import { SandboxRoutesLive } from "../sandbox/SandboxRoutes"
import { PublicUrl } from "../../services/platform/PublicUrl"
import { Attachments } from "../../services/merchants/Attachments"
import { AttachmentSweeperLive } from "../../services/merchants/AttachmentSweeper"
import { InspectorLive, MailerLive, MessagingLive, ObjectStoreLive } from "./Ports"
import { SignedLinks } from "../../services/platform/objectStore/SignedLinks"
import { spanProcessorOf, tracedBy, tracingSettings } from "./Tracing"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { DOCS_PATH } from "../http/middleware/DocsPolicy"
import { LongPollRegistry } from "../http/middleware/LongPollRegistry"
import { ListeningServer, shutdownAware } from "../http/middleware/ListeningServer"
import { Metrics } from "../../services/platform/Metrics"

/** Every route group's handlers (the health group can be swapped, for benchmarks of the edge alone). */
export const makeHandlers = (health: typeof HealthLive = HealthLive) =>
  Layer.mergeAll(
    health,
    AccountLive,
    MembersLive,
    AuditLogLive,
    SignInLive,
    DepositRequestsLive,
    CustomersLive,
    IssuersLive,
    PayoutAddressesLive,
    WebhooksLive,
    WebhookListenersLive,
    EventsLive,
    ReconciliationLive,
    ExportsLive,
    MachineLive,
    StepsLive,
    PayerLive,
    AttachmentsLive,
    PasskeysLive,
    PasskeySignInLive
  ).pipe(
    Layer.provide(AuthenticationLive),
    Layer.provide(PublicUrl.Default),
    // Built after the HTTP server (the handlers are), so released before it closes: its finalizer answers the
    // parked polls that would otherwise hold the server's close.
    Layer.provide(LongPollRegistry.Default)
  )

export const HandlersLive = makeHandlers()

/**
 * Scalar as a local page: no font from fonts.scalar.com, no toolbar (its Share and Generate SDKs upload the
 * document to scalar.com), no analytics, and the API key scheme chosen. Keys past `ScalarConfig` are options of the
 * bundled Scalar that @effect/platform's type does not list.
 */
const docsConfig: HttpApiScalar.ScalarConfig & {
  readonly showToolbar: "always" | "localhost" | "never"
  readonly telemetry: boolean
  readonly authentication: { readonly preferredSecurityScheme: string }
  readonly defaultHttpClient: { readonly targetKey: string; readonly clientKey: string }
} = {
  withDefaultFonts: false,
  showToolbar: "never",
  telemetry: false,
  authentication: { preferredSecurityScheme: "api_key" },
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" }
}

/** The API with its handlers, docs and edge; it needs an HTTP server, the config and the services. */
export const ApiLive = HttpApiBuilder.serve().pipe(
  Layer.provide(EdgeLive),
  Layer.provide(HttpApiScalar.layer({ path: DOCS_PATH, scalar: docsConfig })),
  Layer.provide(ObjectRoutesLive),
  Layer.provide(HomeRouteLive),
  Layer.provide(ErrorDocsRouteLive),
  Layer.provide(CheckoutRoutesLive),
  Layer.provide(DashboardRoutesLive),
  Layer.provide(SandboxRoutesLive),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(HandlersLive)))
)

/**
 * A Node HTTP server on the configured host and port (port 0 picks a free one, for tests). The accept backlog is
 * raised from Node's 511: thousands of long polls reconnecting together would otherwise overflow it, and each
 * dropped connect waits out a SYN retry (1 s, then 3 s, …) before the service even sees it.
 */
export const LISTEN_BACKLOG = 4096

/**
 * How long an idle kept-alive connection stays open: longer than the 60 s a proxy or load balancer commonly keeps
 * its idle upstream connections, so the proxy, not the service, closes them. With Node's 5 s default, a proxy
 * reuses a connection the service has just closed and its client gets a 502. Headers may take as long.
 */
export const KEEP_ALIVE_MS = 65_000

/** A Node HTTP server with the service's connection timeouts. */
const nodeServer = () => {
  const server = createServer()
  server.keepAliveTimeout = KEEP_ALIVE_MS
  server.headersTimeout = KEEP_ALIVE_MS + 1_000
  return server
}

export const HttpServerLive = Layer.unwrapEffect(
  Effect.map(ApiSettings, (config) => {
    const { server, stopAccepting, closed } = shutdownAware(
      answerClientErrors(nodeServer(), config.publicBaseUrl),
      config.publicBaseUrl
    )
    return Layer.merge(
      NodeHttpServer.layer(() => server, { port: config.port, host: config.host, backlog: LISTEN_BACKLOG }),
      Layer.scoped(
        ListeningServer,
        Effect.as(
          Effect.addFinalizer(() => Effect.promise(closed)),
          { stopAccepting }
        )
      )
    )
  })
)

/** The network webhook deliveries use: the system resolver and CAs (tests swap in a local receiver). */
export const WebhookNetworkLive = Layer.mergeAll(WebhookResolver.system, WebhookTrust.system)

/**
 * The ports, each implementation chosen from the configuration (`src/app/Ports.ts`), over the webhook network. The
 * services never read which implementation they talk to.
 */
const makePorts = (network: Layer.Layer<WebhookResolver | WebhookTrust>) =>
  Layer.mergeAll(
    MessagingLive,
    MailerLive,
    ObjectStoreLive.pipe(Layer.provide(SignedLinks.Default)),
    InspectorLive,
    LifecycleBodiesLive,
    WebhookSenderLive.pipe(Layer.provide(WebhookUrlCheck.Default))
  ).pipe(Layer.provideMerge(network))

/**
 * The services the handlers and workers use. Each declares its own dependencies; a layer named twice is built once
 * (Effect memoizes layers by reference), so there is one actor host, one change feed and one set of metrics.
 * Under them, the ports; under everything, the database (embedded or real).
 */
export const makeServices = (network: Layer.Layer<WebhookResolver | WebhookTrust> = WebhookNetworkLive) =>
  Layer.mergeAll(
    Accounts.Default,
    SandboxAccounts.Default,
    Members.Default,
    AuditLog.Default,
    SecurityNotices.Default,
    MemberNotices.Default,
    Attachments.Default,
    Passkeys.Default,
    DepositRequests.Default,
    DepositRequestLedger.Default,
    MerchantResourcesLive,
    PayerFlow.Default,
    Reconciliation.Default,
    RequestExport.Default,
    StepHistory.Default,
    AccountSummary.Default,
    WebhookEndpoints.Default,
    WebhookListeners.Default,
    RateLimiter.Default,
    ActorHost.Default,
    ChainEndpoints.Default,
    ChainReadiness.Default,
    ChangeFeed.Default,
    Ids.Default,
    KeyVault.Default,
    Lease.Default,
    Metrics.Default,
    SignedLinks.Default
  ).pipe(Layer.provideMerge(makePorts(network)), Layer.provideMerge(DatabaseLive))

export const ServicesLive = makeServices()

/** Background workers: singletons under leases. */
export const WorkersLive = Layer.mergeAll(
  SchedulerLive,
  OutboxRelayLive,
  WebhookDispatcherLive,
  WebhookListenerSweepLive,
  ChainWatcherLive,
  CreditRelayLive,
  CreditConsumerLive,
  TreasuryLive,
  AttachmentSweeperLive,
  StepHistorySweeperLive,
  AuditLogSweeperLive,
  MemberNoticesLive
)

/**
 * The whole service, given its configuration. Spans go to `spanProcessor` (tests), else to OTLP when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else nowhere: then the tracer is off, and so is the per-request server span
 * (URL parsing, every header copied into attributes), which would be pure cost.
 */
export const makeApp = (
  network?: Layer.Layer<WebhookResolver | WebhookTrust>,
  spanProcessor?: SpanProcessor
) =>
  Layer.unwrapEffect(
    Effect.map(tracingSettings, (settings) => {
      const processor = spanProcessorOf(settings, spanProcessor)
      const api =
        processor === undefined ? HttpMiddleware.withTracerDisabledWhen(ApiLive, () => true) : ApiLive
      return Layer.mergeAll(api, WorkersLive, MetricsServerLive).pipe(
        Layer.provideMerge(HttpServerLive),
        // Services first: the port opens only once the database is migrated, so no request is accepted early and
        // left hanging without a handler.
        Layer.provideMerge(makeServices(network)),
        HttpServer.withLogAddress,
        tracedBy(processor, settings.otelServiceName)
      )
    })
  )

export const AppLive = makeApp()
