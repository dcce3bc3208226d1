import { randomUUID } from "node:crypto"
import { createServer, type Server } from "node:https"
import type { Socket } from "node:net"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import type { MerchantClient } from "../../support/Api"
import { eventually, pause } from "../../support/eventually"
import { localReceiverNetwork, makeCertificates } from "../../support/HttpsReceiver"
import {
  newMerchantClient,
  scopedPgClient,
  scopedReceiver,
  scopedService
} from "../../support/scopedResources"

// No endpoint may hold up another's deliveries, and disabling an endpoint leaves a log that promises nothing.

const HOST = "isolated-hooks.example.test"
const tls = makeCertificates(HOST)

/** An HTTPS receiver that takes every request and never answers: each attempt to it lasts the 10 s limit. */
const hangingReceiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const sockets = new Set<Socket>()
    const server: Server = createServer(tls, () => {})
    server.on("secureConnection", (socket: Socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { port: (server.address() as { port: number }).port, server, sockets }
  }),
  ({ server, sockets }) =>
    Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => resolve())
        })
    )
)

/** The hanging receiver, the service delivering webhooks, its merchant, and a connection to its database. */
class Fixture extends Context.Tag("test/IsolationFixture")<
  Fixture,
  { readonly hanging: { readonly port: number }; readonly api: MerchantClient; readonly db: pg.Client }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const hanging = yield* hangingReceiver
    const service = yield* scopedService({
      webhookNetwork: localReceiverNetwork(HOST, tls.ca),
      config: { webhookFirstRetryMs: 200, rateLimitCapacity: 10_000 }
    })
    const api = yield* newMerchantClient(service)
    const db = yield* scopedPgClient(service.databaseUrl)
    return { hanging, api, db }
  })
)

const call = <T>(...args: Parameters<MerchantClient["call"]>) =>
  Effect.flatMap(Fixture, ({ api }) => Effect.promise(() => api.call<T>(...args)))
const endpoint = (port: number, path: string) =>
  Effect.map(
    call<{ id: string }>("POST", "/v1/webhooks", { url: `https://${HOST}:${port}/${path}` }),
    (res) => res.body.id
  )

interface LoggedAttempt {
  readonly attempt: number
  readonly outcome: string
  readonly attempted_at: Date
  readonly next_attempt_at: Date | null
}
/** Attempts straight from the log table: the API rounds times to the second, lateness needs milliseconds. */
const attemptsOf = (endpointId: string) =>
  Effect.flatMap(Fixture, ({ db }) =>
    Effect.promise(async () => {
      const result = await db.query<LoggedAttempt>(
        `select attempt, outcome, attempted_at, next_attempt_at from webhook_deliveries
         where endpoint_id = $1 order by attempt`,
        [endpointId.slice(3)]
      )
      return result.rows
    })
  )

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("delivery isolation", () => {
    it.scoped(
      "delivers another endpoint's first attempt and retries on time while one endpoint hangs every worker it can",
      () =>
        Effect.gen(function* () {
          const { hanging } = yield* Fixture
          const flaky = yield* scopedReceiver(tls, (n) => (n <= 3 ? 500 : 200))
          const stuck = yield* endpoint(hanging.port, "stuck")
          const healthy = yield* endpoint(flaky.port, "healthy")
          // More hanging deliveries than the instance has workers.
          for (let i = 0; i < 24; i++) {
            assert.strictEqual((yield* call("POST", `/v1/webhooks/${stuck}/test`)).status, 202)
          }
          yield* pause(500)
          const queuedAt = Date.now()
          assert.strictEqual((yield* call("POST", `/v1/webhooks/${healthy}/test`)).status, 202)
          assert.isTrue(
            yield* eventually(
              Effect.map(attemptsOf(healthy), (attempts) => attempts.some((a) => a.outcome === "succeeded")),
              8_000
            ),
            "not within 8000 ms"
          )

          const attempts = yield* attemptsOf(healthy)
          assert.deepStrictEqual(
            attempts.map((a) => a.outcome),
            ["retrying", "retrying", "retrying", "succeeded"]
          )
          assert.isBelow(attempts[0]!.attempted_at.getTime() - queuedAt, 1_000)
          for (let i = 1; i < attempts.length; i++) {
            const late = attempts[i]!.attempted_at.getTime() - attempts[i - 1]!.next_attempt_at!.getTime()
            assert.isBelow(late, 1_000)
          }
          yield* call("POST", `/v1/webhooks/${stuck}/disable`)
          yield* call("POST", `/v1/webhooks/${healthy}/disable`)
        }),
      30_000
    )
  })

  describe("disabling an endpoint", () => {
    it.scoped(
      "logs its last attempt as cancelled with no next attempt, sends nothing more, and refuses tests and redeliveries with 409",
      () =>
        Effect.gen(function* () {
          const refusing = yield* scopedReceiver(tls, () => 500)
          const id = yield* endpoint(refusing.port, "refusing")
          const queued = yield* call<{ event_id: string }>("POST", `/v1/webhooks/${id}/test`)
          assert.isTrue(
            yield* eventually(
              Effect.map(attemptsOf(id), (attempts) => attempts.length >= 2),
              8_000
            ),
            "not within 8000 ms"
          )
          assert.strictEqual((yield* call("POST", `/v1/webhooks/${id}/disable`)).status, 204)
          const sent = refusing.received.length
          yield* pause(1_500)
          assert.strictEqual(refusing.received.length, sent)

          const attempts = yield* attemptsOf(id)
          assert.deepInclude(attempts.at(-1), { outcome: "cancelled", next_attempt_at: null })
          assert.isTrue(attempts.slice(0, -1).every((a) => a.outcome === "retrying"))
          const log = yield* call<{ deliveries: Array<{ outcome: string; next_attempt_at: string | null }> }>(
            "GET",
            `/v1/webhooks/${id}/deliveries`
          )
          assert.deepInclude(log.body.deliveries[0], { outcome: "cancelled", next_attempt_at: null })

          const test = yield* call<{ error: { code: string } }>("POST", `/v1/webhooks/${id}/test`)
          assert.deepStrictEqual([test.status, test.body.error.code], [409, "invalid_state"])
          const again = yield* call<{ error: { code: string } }>(
            "POST",
            `/v1/events/${queued.body.event_id}/redeliver`,
            { webhook_id: id }
          )
          assert.deepStrictEqual([again.status, again.body.error.code], [409, "invalid_state"])
          // The path's resource is resolved first: an event that does not exist is 404 even with a disabled endpoint.
          const unknown = yield* call<{ error: { code: string } }>(
            "POST",
            `/v1/events/evt_${randomUUID()}/redeliver`,
            { webhook_id: id }
          )
          assert.deepStrictEqual([unknown.status, unknown.body.error.code], [404, "event_not_found"])
        }),
      30_000
    )
  })
})
