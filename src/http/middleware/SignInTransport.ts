import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { HttpsRequired } from "../../../services/domain/Errors"
import { httpsRequired, signInTransport } from "../../../services/merchants/SignInAttempts"
import { ApiSettings } from "./ApiSettings"

/** Who is signing in, as the sign-in limits count them. */
export interface SignInClient {
  /** The client's address: the socket's peer, or the last `X-Forwarded-For` hop behind a loopback proxy. */
  readonly client: string
  readonly userAgent: string | undefined
}

/**
 * The client of any request, counted as sign-in counts it (the socket's peer, or the last `X-Forwarded-For` hop
 * behind a loopback proxy), whatever the transport: what the audit log records.
 */
export const requestClient: Effect.Effect<SignInClient, never, HttpServerRequest.HttpServerRequest> =
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const socket = NodeHttpServerRequest.toIncomingMessage(request).socket as
      | { remoteAddress?: string }
      | undefined
    const decided = signInTransport({
      environment: "sandbox",
      peer: socket?.remoteAddress ?? "unknown",
      encrypted: true,
      forwardedProto: undefined,
      forwardedFor: request.headers["x-forwarded-for"]
    })
    return { client: decided.client.slice(0, 64), userAgent: request.headers["user-agent"] }
  })

/**
 * The HTTPS rule of the sign-in routes (`signInTransport`), read from the request's own socket: fails with 403
 * `https_required` outside the sandbox for plain HTTP from a non-loopback client, and otherwise names the client
 * its attempts count against.
 */
export const requireSecureSignIn: Effect.Effect<
  SignInClient,
  HttpsRequired,
  HttpServerRequest.HttpServerRequest | ApiSettings
> = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const settings = yield* ApiSettings
  const socket = NodeHttpServerRequest.toIncomingMessage(request).socket as
    | { remoteAddress?: string; encrypted?: boolean }
    | undefined
  const decided = signInTransport({
    environment: settings.serviceEnv,
    peer: socket?.remoteAddress ?? "unknown",
    encrypted: socket?.encrypted === true,
    forwardedProto: request.headers["x-forwarded-proto"],
    forwardedFor: request.headers["x-forwarded-for"]
  })
  if (!decided.allowed) return yield* httpsRequired
  return { client: decided.client.slice(0, 64), userAgent: request.headers["user-agent"] }
})
