import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { createServer as createTcpServer, type Server, type Socket } from "node:net"
import type { TLSSocket } from "node:tls"
import { WebhookSender } from "../../../services/webhooks/WebhookSender"
import {
  CONNECT_TIMEOUT_MS,
  IDLE_CLOSE_MS,
  TOTAL_TIMEOUT_MS,
  WebhookSenderLive,
  WebhookTrust
} from "../../../services/webhooks/HttpsWebhookSender"
import { addressRefusal, WebhookResolver, WebhookUrlCheck } from "../../../services/webhooks/WebhookUrlRules"
import { localReceiverNetwork, makeCertificates } from "../../support/HttpsReceiver"

// The transport's two limits with the real defaults (5 s to connect, 10 s in all): one attempt to a receiver that
// answers after 7 s succeeds, one that never answers is cut at 10 s, one that never finishes its TLS handshake at 5 s.

const HOST = "slow-hooks.example.test"
const tls = makeCertificates(HOST)

/** A local server for the test's lifetime; the sockets it accepted are destroyed before it closes. */
const listening = (server: Server) =>
  Effect.acquireRelease(
    Effect.async<number>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as { port: number }).port)))
    }),
    () =>
      Effect.async<void>((resume) => {
        for (const socket of sockets.get(server) ?? []) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

const sockets = new WeakMap<Server, Set<Socket>>()
const tracked = (server: Server) => {
  const open = new Set<Socket>()
  sockets.set(server, open)
  server.on("connection", (socket: Socket) => {
    open.add(socket)
    socket.on("close", () => open.delete(socket))
  })
  return server
}

const SenderLive = WebhookSenderLive.pipe(
  Layer.provideMerge(WebhookUrlCheck.Default),
  Layer.provideMerge(localReceiverNetwork(HOST, tls.ca))
)

layer(SenderLive)("webhook transport limits", (it) => {
  it.scoped(
    "lets a receiver answer after 7 s, cuts one that never answers at 10 s and one that never connects at 5 s",
    () =>
      Effect.gen(function* () {
        const slow = yield* listening(
          tracked(
            createHttpsServer(tls, (req, res) => {
              req.resume()
              req.on("end", () => setTimeout(() => res.end("ok"), 7_000))
            }) as unknown as Server
          )
        )
        const silent = yield* listening(tracked(createHttpsServer(tls, () => {}) as unknown as Server))
        // Takes the TCP connection and never speaks TLS: the handshake never completes.
        const mute = yield* listening(tracked(createTcpServer(() => {})))
        const sender = yield* WebhookSender
        const send = (port: number) =>
          sender.send({
            url: `https://${HOST}:${port}/hooks`,
            headers: { "content-type": "application/json" },
            body: "{}"
          })
        const [answered, neverAnswered, neverConnected] = yield* Effect.all(
          [send(slow), send(silent), send(mute)],
          {
            concurrency: "unbounded"
          }
        )

        assert.strictEqual(answered.ok, true)
        assert.strictEqual(answered.status, 200)
        assert.isAtLeast(answered.durationMs, 6_900)
        assert.isBelow(answered.durationMs, TOTAL_TIMEOUT_MS)

        assert.strictEqual(neverAnswered.ok, false)
        assert.strictEqual(neverAnswered.errorKind, "timeout")
        assert.include(neverAnswered.errorMessage, "total limit")
        assert.isAtLeast(neverAnswered.durationMs, TOTAL_TIMEOUT_MS - 50)
        assert.isBelow(neverAnswered.durationMs, TOTAL_TIMEOUT_MS + 1_500)

        assert.strictEqual(neverConnected.ok, false)
        assert.strictEqual(neverConnected.errorKind, "timeout")
        assert.include(neverConnected.errorMessage, "connect limit")
        assert.isAtLeast(neverConnected.durationMs, CONNECT_TIMEOUT_MS - 50)
        assert.isBelow(neverConnected.durationMs, CONNECT_TIMEOUT_MS + 1_500)
      }),
    30_000
  )
})

// Kept connections: counted as TLS handshakes (`secureConnection`) at a local receiver, by the SNI name they carried.

const ALPHA = "alpha-hooks.example.test"
const BETA = "beta-hooks.example.test"
const poolTls = makeCertificates(ALPHA, BETA)
/** What each name resolves to now; a test changes it between attempts (the resolver is asked at every attempt). */
const answers = new Map<string, string>()
const PUBLIC_A = "93.184.216.34"
const PUBLIC_B = "93.184.216.35"

const PooledSenderLive = WebhookSenderLive.pipe(
  Layer.provideMerge(WebhookUrlCheck.Default),
  Layer.provideMerge(
    Layer.mergeAll(
      Layer.succeed(WebhookResolver, {
        resolve: (name) => {
          const address = answers.get(name)
          return address === undefined
            ? Effect.fail(`the name ${name} does not resolve`)
            : Effect.succeed([{ address, family: 4 as const }])
        }
      }),
      // Every public address stands for the local receiver; a refused address never gets this far.
      Layer.succeed(WebhookTrust, {
        ca: poolTls.ca,
        route: (a) => (addressRefusal(a.address) === undefined ? { address: "127.0.0.1", family: 4 } : a)
      })
    )
  )
)

/** A receiver counting TLS handshakes (with their SNI name) and open connections; `answer` handles request n. */
const countingReceiver = (answer: (n: number, req: IncomingMessage, res: ServerResponse) => void) =>
  Effect.gen(function* () {
    const handshakes: Array<string> = []
    let requests = 0
    const server = tracked(
      createHttpsServer(poolTls, (req, res) => {
        req.resume()
        req.on("end", () => answer(++requests, req, res))
      }).on("secureConnection", (socket: TLSSocket) => {
        handshakes.push(String(socket.servername))
      }) as unknown as Server
    )
    const port = yield* listening(server)
    return {
      port,
      handshakes,
      requests: () => requests,
      open: () => sockets.get(server)?.size ?? 0
    }
  })

const reset = Effect.sync(() => {
  answers.clear()
  answers.set(ALPHA, PUBLIC_A)
  answers.set(BETA, PUBLIC_A)
})

layer(PooledSenderLive)("webhook transport, kept connections", (it) => {
  const deliver = (host: string, port: number) =>
    Effect.flatMap(WebhookSender, (sender) =>
      sender.send({
        url: `https://${host}:${port}/hooks`,
        headers: { "content-type": "application/json" },
        body: "{}"
      })
    )
  const ok = (n: number, _req: IncomingMessage, res: ServerResponse) => res.end(`ok ${n}`)

  it.scoped("two attempts to one endpoint use one TLS connection", () =>
    Effect.gen(function* () {
      yield* reset
      const receiver = yield* countingReceiver(ok)
      const first = yield* deliver(ALPHA, receiver.port)
      const second = yield* deliver(ALPHA, receiver.port)
      assert.strictEqual(first.ok, true)
      assert.strictEqual(second.ok, true)
      assert.strictEqual(receiver.requests(), 2)
      assert.deepStrictEqual(receiver.handshakes, [ALPHA])
    })
  )

  it.scoped("two names resolving to one address never share a connection", () =>
    Effect.gen(function* () {
      yield* reset
      const receiver = yield* countingReceiver(ok)
      for (const host of [ALPHA, BETA, ALPHA, BETA])
        assert.strictEqual((yield* deliver(host, receiver.port)).ok, true)
      assert.strictEqual(receiver.requests(), 4)
      // One handshake per name, each with its own SNI: a connection made for one name carried nothing for the other.
      assert.deepStrictEqual(receiver.handshakes, [ALPHA, BETA])
    })
  )

  it.scoped(
    "a name now resolving to a forbidden address is refused with its kept connection open, and one resolving elsewhere gets a new connection",
    () =>
      Effect.gen(function* () {
        yield* reset
        const receiver = yield* countingReceiver(ok)
        assert.strictEqual((yield* deliver(ALPHA, receiver.port)).ok, true)
        assert.strictEqual(receiver.open(), 1)

        answers.set(ALPHA, "10.0.0.7")
        const refused = yield* deliver(ALPHA, receiver.port)
        assert.strictEqual(refused.ok, false)
        assert.strictEqual(refused.errorKind, "ssrf_refused")
        assert.match(refused.errorMessage ?? "", /private/)
        assert.strictEqual(receiver.requests(), 1)
        assert.strictEqual(receiver.open(), 1)

        answers.set(ALPHA, PUBLIC_B)
        assert.strictEqual((yield* deliver(ALPHA, receiver.port)).ok, true)
        assert.strictEqual(receiver.requests(), 2)
        assert.deepStrictEqual(receiver.handshakes, [ALPHA, ALPHA])
      })
  )

  it.scoped(
    "an idle kept connection is closed after a few seconds; the next attempt connects anew",
    () =>
      Effect.gen(function* () {
        yield* reset
        const receiver = yield* countingReceiver(ok)
        assert.strictEqual((yield* deliver(ALPHA, receiver.port)).ok, true)
        assert.strictEqual(receiver.open(), 1)
        // Real time: the agent's idle timer is a Node timer, not the test clock.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, IDLE_CLOSE_MS + 1_000)))
        assert.strictEqual(receiver.open(), 0)
        assert.strictEqual((yield* deliver(ALPHA, receiver.port)).ok, true)
        assert.deepStrictEqual(receiver.handshakes, [ALPHA, ALPHA])
      }),
    15_000
  )

  it.scoped(
    "on a kept connection a receiver may answer after 6 s (no connect limit) and one that never answers is cut at 10 s",
    () =>
      Effect.gen(function* () {
        yield* reset
        const receiver = yield* countingReceiver((n, _req, res) => {
          if (n === 1) res.end("ok")
          else if (n === 2) setTimeout(() => res.end("ok"), 6_000)
        })
        assert.strictEqual((yield* deliver(ALPHA, receiver.port)).ok, true)
        const slow = yield* deliver(ALPHA, receiver.port)
        assert.strictEqual(slow.ok, true)
        assert.isAtLeast(slow.durationMs, 5_900)
        const silent = yield* deliver(ALPHA, receiver.port)
        assert.strictEqual(silent.ok, false)
        assert.strictEqual(silent.errorKind, "timeout")
        assert.include(silent.errorMessage, "total limit")
        assert.isAtLeast(silent.durationMs, TOTAL_TIMEOUT_MS - 50)
        assert.isBelow(silent.durationMs, TOTAL_TIMEOUT_MS + 1_500)
        assert.deepStrictEqual(receiver.handshakes, [ALPHA])
      }),
    30_000
  )

  it.scoped(
    "a kept connection the receiver drops before answering is replaced once, within the same attempt",
    () =>
      Effect.gen(function* () {
        yield* reset
        const receiver = yield* countingReceiver((n, req, res) => {
          if (n === 2) req.socket.destroy()
          else res.end("ok")
        })
        assert.strictEqual((yield* deliver(ALPHA, receiver.port)).ok, true)
        const second = yield* deliver(ALPHA, receiver.port)
        assert.strictEqual(second.ok, true)
        assert.strictEqual(receiver.requests(), 3)
        assert.deepStrictEqual(receiver.handshakes, [ALPHA, ALPHA])
      })
  )
})
