import { createServer } from "node:http"
import { HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { captureFrameworkAnswer, primeBody } from "../../../src/http/middleware/PlatformAdapter"

// The two places the service reaches under @effect/platform's public API, checked against the platform itself:
// if an upgrade changes how it caches a request's body or writes an answer, these fail before the service does.

/** Serves `app` on a free loopback port for the rest of the test's scope; its base URL. */
const serving = <E>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest>
) =>
  Effect.gen(function* () {
    const server = yield* Layer.build(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    yield* Effect.provide(HttpServer.serveEffect(app), server)
    const { address } = Context.get(server, HttpServer.HttpServer)
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return `http://127.0.0.1:${address.port}`
  })

describe("the platform adapter", () => {
  it.scopedLive(
    "primes a request's body: the platform's text and json read the primed bytes, not the stream",
    () =>
      Effect.gen(function* () {
        const base = yield* serving(
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            primeBody(request, '{"primed":true}')
            const text = yield* request.text
            const json = yield* request.json
            return HttpServerResponse.unsafeJson({ text, json })
          })
        )
        const answer = yield* Effect.promise(() =>
          fetch(base, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: '{"real":true}'
          }).then((r) => r.json())
        )
        expect(answer).toEqual({ text: '{"primed":true}', json: { primed: true } })
      })
  )

  it.scopedLive(
    "captures the framework's placeholder answer (one writeHead, one end) and sends nothing until told",
    () =>
      Effect.gen(function* () {
        const captured: Array<Record<string, unknown>> = []
        let placeholdersEnded = 0
        const base = yield* serving(
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const res = NodeHttpServerRequest.toServerResponse(request)
            captureFrameworkAnswer(
              res,
              (headers) => captured.push({ ...headers }),
              () => {
                placeholdersEnded++
                // The real answer, later and outside the request's fiber, with the placeholder's headers kept.
                // (Its length and type were the placeholder's.)
                setTimeout(() => {
                  const { "content-length": _length, "content-type": _type, ...kept } = captured[0] ?? {}
                  res.writeHead(200, { ...kept, "content-type": "text/plain" } as Record<string, string>)
                  res.end("the real answer")
                }, 200)
              }
            )
            return HttpServerResponse.text("placeholder", { headers: { "x-kept": "yes" } })
          })
        )
        const started = Date.now()
        const answer = yield* Effect.promise(() => fetch(base))
        const body = yield* Effect.promise(() => answer.text())
        expect(Date.now() - started).toBeGreaterThanOrEqual(190)
        expect(body).toBe("the real answer")
        expect(answer.headers.get("x-kept")).toBe("yes")
        expect(captured).toHaveLength(1)
        expect(captured[0]).toMatchObject({ "x-kept": "yes", "content-length": "11" })
        expect(placeholdersEnded).toBe(1)
      })
  )
})
