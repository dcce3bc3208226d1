import { SqlClient } from "@effect/sql"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Option } from "effect"
import { toId, uuidFromId } from "../../services/domain/PrefixedId"
import { formatTimestamp } from "../../services/domain/Timestamp"
import { chainSettings } from "../../services/chain/ChainSettings"
import { SandboxAccounts } from "../../services/merchants/SandboxAccounts"
import { isLoopback, signInTransport } from "../../services/merchants/SignInAttempts"
import { RouteNotFound } from "../http/Errors"
import { ApiSettings } from "../http/middleware/ApiSettings"
import { fund, type PayMode, payRequest, payTargetOf } from "./devnet"
import { CHECKOUT_PATH } from "../web/checkout/CheckoutRoutes"

const refused = (status: number, message: string) =>
  HttpServerResponse.unsafeJson({ error: { code: "sandbox_refused", message } }, { status })

const modes: ReadonlyArray<PayMode> = ["exact", "partial", "over", "stranger"]

/** The sandbox sign-in's routes (decision 0087): the accounts of this instance, and a session of one of them. */
export const SANDBOX_ACCOUNTS_PATH = "/dashboard/sandbox/accounts"
export const SANDBOX_SIGN_IN_PATH = "/dashboard/sandbox/sign-in"

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Whether a request may use the sandbox sign-in: it comes from this machine (the socket's peer on loopback and,
 * behind a proxy on this host, the forwarded client too), names this service as its `Host` (a loopback name or the
 * host of `PUBLIC_BASE_URL` / `DASHBOARD_ORIGIN`, so a page rebinding its own name to 127.0.0.1 is refused), and
 * is no other page's call (`Origin` absent, as on a same-origin read, or the dashboard's own).
 */
export const fromThisMachine = (
  request: {
    readonly peer: string
    readonly host: string | undefined
    readonly origin: string | undefined
    readonly forwardedFor: string | undefined
  },
  own: { readonly publicBaseUrl: string; readonly dashboardOrigin: string }
): boolean => {
  const client = signInTransport({
    environment: "sandbox",
    peer: request.peer,
    encrypted: true,
    forwardedProto: undefined,
    forwardedFor: request.forwardedFor
  }).client
  if (!isLoopback(request.peer) || !isLoopback(client)) return false
  const ownHosts = new Set([new URL(own.publicBaseUrl).host, new URL(own.dashboardOrigin).host])
  const host = request.host?.toLowerCase()
  const hostname = host?.replace(/:\d+$/, "")
  if (host === undefined || !(ownHosts.has(host) || (hostname !== undefined && loopbackHosts.has(hostname))))
    return false
  return (
    request.origin === undefined ||
    request.origin === new URL(own.publicBaseUrl).origin ||
    request.origin === own.dashboardOrigin
  )
}

/**
 * The checkout's sandbox helpers, registered only in the sandbox (in production these paths do not exist): fund a
 * test wallet with test USDC and gas, and pay a request exactly, partly, too much or from a stranger, the way
 * `npm run cli -- devnet …` does, so every money path can be seen in a browser on `npm start`.
 */
export const SandboxRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* chainSettings
    if (settings.serviceEnv !== "sandbox") return
    const sql = yield* SqlClient.SqlClient
    const sandboxAccounts = yield* SandboxAccounts
    const api = yield* ApiSettings
    // Refused as the path would be in production: from elsewhere, the routes do not exist.
    const thisMachineOnly = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const socket = NodeHttpServerRequest.toIncomingMessage(request).socket as
        | { remoteAddress?: string }
        | undefined
      const allowed = fromThisMachine(
        {
          peer: socket?.remoteAddress ?? "unknown",
          host: request.headers.host,
          origin: request.headers.origin,
          forwardedFor: request.headers["x-forwarded-for"]
        },
        api
      )
      if (!allowed) {
        const path = request.url.split("?")[0]
        return yield* new RouteNotFound({ message: `No route for ${request.method} ${path}.` })
      }
    })
    const body = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.orElseSucceed(request.json, () => ({}) as unknown)
    ).pipe(
      Effect.map((json) =>
        typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {}
      )
    )
    const attempt = <A>(run: () => Promise<A>) =>
      Effect.tryPromise(run).pipe(
        Effect.match({
          onSuccess: (result) => HttpServerResponse.unsafeJson(result, { status: 200 }),
          onFailure: (e) => refused(409, e.error instanceof Error ? e.error.message : String(e.error))
        })
      )
    yield* router.get(
      SANDBOX_ACCOUNTS_PATH,
      Effect.gen(function* () {
        yield* thisMachineOnly
        const listed = yield* sandboxAccounts.list()
        return HttpServerResponse.unsafeJson({
          accounts: listed.map((a) => ({
            id: toId("acct", a.id),
            name: a.name,
            created_at: formatTimestamp(a.createdAt),
            member_emails: a.emails
          }))
        })
      })
    )
    yield* router.post(
      SANDBOX_SIGN_IN_PATH,
      Effect.gen(function* () {
        yield* thisMachineOnly
        const b = yield* body
        const uuid = uuidFromId("acct", String(b.account_id ?? ""))
        const session = uuid === undefined ? Option.none() : yield* sandboxAccounts.signIn(uuid)
        if (Option.isNone(session)) return refused(404, "No such account on this sandbox.")
        // The token the CLI's dashboard link carries: the page trades it at once for a fresh session.
        return HttpServerResponse.unsafeJson({
          session_token: session.value.token,
          dashboard_url: `/dashboard/#session=${encodeURIComponent(session.value.token)}`
        })
      })
    )
    yield* router.post(
      `${CHECKOUT_PATH}sandbox/fund`,
      Effect.flatMap(body, (b) => attempt(() => fund(settings, String(b.address ?? ""), "100.000000")))
    )
    yield* router.post(
      `${CHECKOUT_PATH}sandbox/pay`,
      Effect.gen(function* () {
        const b = yield* body
        const uuid = uuidFromId("dr", String(b.deposit_request ?? ""))
        const mode = modes.find((m) => m === b.mode)
        if (uuid === undefined) return refused(404, "No such payment request.")
        if (mode === undefined) return refused(400, `mode must be one of ${modes.join(", ")}`)
        const target = yield* Effect.provideService(payTargetOf(uuid), SqlClient.SqlClient, sql)
        if (Either.isLeft(target)) return refused(409, target.left)
        return yield* attempt(() => payRequest(settings, target.right, mode, undefined))
      }).pipe(Effect.orDie)
    )
  })
)
