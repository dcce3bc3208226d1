import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createServer as createHttpsServer } from "node:https"
import { createServer as createTcpServer, type Server, type Socket } from "node:net"
import { WebhookSender } from "../../services/WebhookSender"
import { CONNECT_TIMEOUT_MS, TOTAL_TIMEOUT_MS, WebhookSenderLive } from "../../services/WebhookTransport"
import { WebhookUrlCheck } from "../../services/WebhookUrlCheck"
import { localReceiverNetwork, makeCertificates } from "../support/HttpsReceiver"

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
  Layer.provideMerge(WebhookUrlCheck.layer),
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
