import { Context, Effect, Layer } from "effect"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { type DeliveryOutcome, WebhookSender } from "./WebhookSender"
import { type ResolvedAddress, WebhookUrlCheck } from "./WebhookUrlCheck"

/** Connect and total timeouts of one attempt, and how much of an answer is read. */
export const CONNECT_TIMEOUT_MS = 5_000
export const TOTAL_TIMEOUT_MS = 10_000
export const RESPONSE_CAP_BYTES = 64 * 1024

/**
 * The network deliveries see: in production the system's certificate authorities and the checked address
 * itself. Tests supply a test CA and route a checked (public) address to a local receiver, so the URL rules stay
 * exactly the production ones.
 */
export class WebhookTrust extends Context.Tag("deposits/WebhookTrust")<
  WebhookTrust,
  { readonly ca?: string | Buffer; readonly route?: (checked: ResolvedAddress) => ResolvedAddress }
>() {
  static readonly system = Layer.succeed(WebhookTrust, {})
}

const tlsCodes = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO|ERR_TLS/

const classify = (error: NodeJS.ErrnoException): DeliveryOutcome["errorKind"] => {
  const code = error.code ?? ""
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "dns"
  if (code === "ETIMEDOUT" || code === "ESOCKETTIMEDOUT") return "timeout"
  if (tlsCodes.test(code) || tlsCodes.test(error.message)) return "tls"
  return "connection"
}

/**
 * One POST to the address that was checked, never to a second resolution (a rebinding name gains nothing), with
 * SNI and certificate checks for the hostname, no redirects followed, connect and total timeouts, and at most
 * 64 KiB of the answer read.
 */
const post = (
  url: URL,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  ca: string | Buffer | undefined
) =>
  Effect.async<DeliveryOutcome>((resume) => {
    const started = performance.now()
    let settled = false
    const done = (outcome: Omit<DeliveryOutcome, "durationMs">) => {
      if (settled) return
      settled = true
      clearTimeout(connecting)
      clearTimeout(total)
      resume(Effect.succeed({ ...outcome, durationMs: performance.now() - started }))
    }
    const pinned: LookupFunction = (_host, options, callback) => {
      if (typeof options === "object" && options.all) {
        ;(callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
          address
        ])
      } else callback(null, address.address, address.family)
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    const req = send(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup: pinned,
        servername: url.hostname,
        agent: false,
        ...(ca === undefined ? {} : { ca })
      },
      (res) => {
        const status = res.statusCode ?? 0
        let read = 0
        const excerpt: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => {
          read += chunk.length
          if (read <= RESPONSE_CAP_BYTES) excerpt.push(chunk)
          else res.destroy()
        })
        const finish = () => {
          if (status >= 200 && status < 300) return done({ ok: true, status })
          if (status >= 300 && status < 400) {
            return done({
              ok: false,
              status,
              errorKind: "redirect_refused",
              errorMessage: "redirects are not followed"
            })
          }
          const text = Buffer.concat(excerpt).toString("utf8").slice(0, 500)
          done({
            ok: false,
            status,
            errorKind: "non_2xx",
            errorMessage: text === "" ? `HTTP ${status}` : text
          })
        }
        res.on("end", finish)
        res.on("close", finish)
        res.on("error", finish)
      }
    )
    // Two timers, not `http.request`'s `timeout` (a socket idle timeout, which cut receivers that answer after
    // 5 s): the connect limit ends once the connection is up (TLS included), the total limit never.
    const connecting = setTimeout(() => {
      req.destroy()
      done({
        ok: false,
        errorKind: "timeout",
        errorMessage: `connect limit: no connection within ${CONNECT_TIMEOUT_MS} ms`
      })
    }, CONNECT_TIMEOUT_MS)
    const total = setTimeout(() => {
      req.destroy()
      done({
        ok: false,
        errorKind: "timeout",
        errorMessage: `total limit: no complete answer within ${TOTAL_TIMEOUT_MS} ms`
      })
    }, TOTAL_TIMEOUT_MS)
    req.on("socket", (socket) => {
      const connected = () => clearTimeout(connecting)
      if (url.protocol === "https:") socket.once("secureConnect", connected)
      else if (socket.connecting) socket.once("connect", connected)
      else connected()
    })
    req.on("error", (error: NodeJS.ErrnoException) =>
      done({ ok: false, errorKind: classify(error), errorMessage: error.message })
    )
    req.end(body)
    return Effect.sync(() => req.destroy())
  })

/** The live sender: the URL rules again, right before each attempt, then the pinned POST. */
export const WebhookSenderLive = Layer.effect(
  WebhookSender,
  Effect.gen(function* () {
    const urls = yield* WebhookUrlCheck
    const trust = yield* WebhookTrust
    return {
      send: ({ url, headers, body }) =>
        urls.resolve(url).pipe(
          Effect.matchEffect({
            onFailure: (reason) =>
              Effect.succeed<DeliveryOutcome>({
                ok: false,
                errorKind: "ssrf_refused",
                errorMessage: reason,
                durationMs: 0
              }),
            onSuccess: ({ url: parsed, addresses }) =>
              post(parsed, trust.route ? trust.route(addresses[0]!) : addresses[0]!, headers, body, trust.ca)
          })
        )
    }
  })
)
