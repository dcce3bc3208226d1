import { Context, Effect, Layer } from "effect"
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { type DeliveryOutcome, RESPONSE_BODY_KEPT, WebhookSender } from "./WebhookSender"
import { type ResolvedAddress, WebhookUrlCheck } from "./WebhookUrlRules"

/** Connect and total timeouts of one attempt, and how much of an answer is read. */
export const CONNECT_TIMEOUT_MS = 5_000
export const TOTAL_TIMEOUT_MS = 10_000
export const RESPONSE_CAP_BYTES = 64 * 1024
/**
 * How long a kept connection may sit unused before it is closed: under the 5 s keep-alive of Node's own server
 * (and of most receivers), so we close first and seldom write into a connection the receiver is closing.
 */
export const IDLE_CLOSE_MS = 4_000

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
 * Kept-alive connections, one agent per checked address: (scheme, host name, port, resolved address, TLS
 * servername). A connection is therefore reused only for the same name at the same checked address; another
 * endpoint's name, or this name resolving elsewhere, gets its own. Reuse never skips a check: the URL rules run
 * before every attempt, and only an address that passed them picks its agent.
 */
interface PooledAgent {
  readonly agent: HttpAgent
  lastUsed: number
}

const makeConnectionPool = (ca: string | Buffer | undefined) => {
  const agents = new Map<string, PooledAgent>()
  let sweptAt = 0
  const keyOf = (url: URL, checked: ResolvedAddress) =>
    `${url.protocol}//${url.hostname}:${url.port === "" ? (url.protocol === "https:" ? "443" : "80") : url.port}` +
    `|${checked.address}|${url.protocol === "https:" ? url.hostname : ""}`
  /** Agents with no connection left are dropped a while after their last use, so endpoints come and go freely. */
  const sweep = (now: number) => {
    if (now - sweptAt < IDLE_CLOSE_MS) return
    sweptAt = now
    for (const [key, pooled] of agents) {
      const open = Object.keys(pooled.agent.sockets).length + Object.keys(pooled.agent.freeSockets).length
      if (open === 0 && now - pooled.lastUsed > 2 * IDLE_CLOSE_MS) {
        pooled.agent.destroy()
        agents.delete(key)
      }
    }
  }
  return {
    /** Of the checked addresses (every one passed the rules), one that already has kept connections, else the first. */
    pick: (url: URL, checked: ReadonlyArray<ResolvedAddress>): ResolvedAddress =>
      checked.find((a) => agents.has(keyOf(url, a))) ?? checked[0]!,
    agentFor: (url: URL, checked: ResolvedAddress): HttpAgent => {
      const now = performance.now()
      sweep(now)
      const key = keyOf(url, checked)
      let pooled = agents.get(key)
      if (pooled === undefined) {
        // `timeout` is the idle limit of a kept connection: the agent closes a free socket when it fires (a
        // socket in use only reports it, and the attempt's own timers govern it).
        const options = { keepAlive: true, timeout: IDLE_CLOSE_MS, scheduling: "lifo" as const }
        pooled = {
          agent:
            url.protocol === "https:"
              ? new HttpsAgent({ ...options, ...(ca === undefined ? {} : { ca }) })
              : new HttpAgent(options),
          lastUsed: now
        }
        agents.set(key, pooled)
      }
      pooled.lastUsed = now
      return pooled.agent
    },
    close: () => {
      for (const pooled of agents.values()) pooled.agent.destroy()
      agents.clear()
    }
  }
}

/** A kept connection the receiver closed while it sat idle fails before any answer with one of these. */
const staleConnectionCodes = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"])

/**
 * One POST to the address that was checked, never to a second resolution (a rebinding name gains nothing), with
 * SNI and certificate checks for the hostname, no redirects followed, connect and total timeouts, and at most
 * 64 KiB of the answer read. The connection may be a kept one to that same checked address; if such a connection
 * turns out closed before any answer, the POST is made once more on a new connection within the same limits.
 */
const post = (
  url: URL,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  ca: string | Buffer | undefined,
  agent: HttpAgent
) =>
  Effect.async<DeliveryOutcome>((resume) => {
    const started = performance.now()
    let settled = false
    let connecting: ReturnType<typeof setTimeout> | undefined
    let current: ReturnType<typeof httpRequest> | undefined
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
    const attempt = (via: HttpAgent | false) => {
      let answered = false
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
          agent: via,
          ...(ca === undefined ? {} : { ca })
        },
        (res) => {
          answered = true
          const status = res.statusCode ?? 0
          let read = 0
          const excerpt: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => {
            read += chunk.length
            if (read <= RESPONSE_CAP_BYTES) excerpt.push(chunk)
            else res.destroy()
          })
          const finish = () => {
            const whole = Buffer.concat(excerpt).toString("utf8")
            const answer = {
              status,
              responseBody: whole.slice(0, RESPONSE_BODY_KEPT),
              responseTruncated: whole.length > RESPONSE_BODY_KEPT || read > RESPONSE_CAP_BYTES
            }
            if (status >= 200 && status < 300) return done({ ok: true, ...answer })
            if (status >= 300 && status < 400) {
              return done({
                ok: false,
                ...answer,
                errorKind: "redirect_refused",
                errorMessage: "redirects are not followed"
              })
            }
            const text = whole.slice(0, 500)
            done({
              ok: false,
              ...answer,
              errorKind: "non_2xx",
              errorMessage: text === "" ? `HTTP ${status}` : text
            })
          }
          res.on("end", finish)
          res.on("close", finish)
          res.on("error", finish)
        }
      )
      current = req
      // Two timers, not `http.request`'s `timeout` (a socket idle timeout, which cut receivers that answer after
      // 5 s): the connect limit ends once the connection is up (TLS included) or at once on a kept connection,
      // the total limit never.
      clearTimeout(connecting)
      connecting = setTimeout(() => {
        req.destroy()
        done({
          ok: false,
          errorKind: "timeout",
          errorMessage: `connect limit: no connection within ${CONNECT_TIMEOUT_MS} ms`
        })
      }, CONNECT_TIMEOUT_MS)
      req.on("socket", (socket) => {
        const connected = () => clearTimeout(connecting)
        if (req.reusedSocket) connected()
        else if (url.protocol === "https:") socket.once("secureConnect", connected)
        else if (socket.connecting) socket.once("connect", connected)
        else connected()
      })
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (settled) return
        if (via !== false && req.reusedSocket && !answered && staleConnectionCodes.has(error.code ?? "")) {
          return attempt(false)
        }
        done({ ok: false, errorKind: classify(error), errorMessage: error.message })
      })
      req.end(body)
    }
    const total = setTimeout(() => {
      current?.destroy()
      done({
        ok: false,
        errorKind: "timeout",
        errorMessage: `total limit: no complete answer within ${TOTAL_TIMEOUT_MS} ms`
      })
    }, TOTAL_TIMEOUT_MS)
    attempt(agent)
    return Effect.sync(() => current?.destroy())
  })

type SendRequest = Parameters<Context.Tag.Service<WebhookSender>["send"]>[0]

/**
 * The `WebhookSender` port's live implementation (this file is its HTTPS transport): the URL rules again, right
 * before each attempt, then the pinned POST over a kept connection to that checked address when there is one.
 */
export const WebhookSenderLive = Layer.scoped(
  WebhookSender,
  Effect.gen(function* () {
    const urls = yield* WebhookUrlCheck
    const trust = yield* WebhookTrust
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => makeConnectionPool(trust.ca)),
      (pool) => Effect.sync(pool.close)
    )
    return {
      send: Effect.fn("WebhookSender.send")(({ url, headers, body }: SendRequest) =>
        urls.resolve(url).pipe(
          Effect.matchEffect({
            onFailure: (reason) =>
              Effect.succeed<DeliveryOutcome>({
                ok: false,
                errorKind: "ssrf_refused",
                errorMessage: reason,
                durationMs: 0
              }),
            onSuccess: ({ url: parsed, addresses }) => {
              const checked = pool.pick(parsed, addresses)
              return post(
                parsed,
                trust.route ? trust.route(checked) : checked,
                headers,
                body,
                trust.ca,
                pool.agentFor(parsed, checked)
              )
            }
          })
        )
      )
    }
  })
)
