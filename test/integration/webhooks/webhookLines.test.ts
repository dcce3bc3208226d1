import { createServer, type Server } from "node:https"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type pg from "pg"
import { DISPATCH_PER_ENDPOINT } from "../../../services/webhooks/WebhookDispatcher"
import type { MerchantClient } from "../../support/Api"
import { eventually, pause } from "../../support/eventually"
import { localReceiverNetwork, makeCertificates } from "../../support/HttpsReceiver"
import { newMerchantClient, scopedPgClient, scopedService } from "../../support/scopedResources"

// A burst to one endpoint waits in that endpoint's line on the instance: never more than the cap in flight, every
// job attempted once, none left behind.

const HOST = "lined-hooks.example.test"
const tls = makeCertificates(HOST)
const BURST = 64

/** An HTTPS receiver that answers 200 after 300 ms (long enough for the burst to pile up behind the cap) and counts how many requests it holds at once. */
const slowReceiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const eventIds: Array<string> = []
    let inFlight = 0
    let maxInFlight = 0
    const server: Server = createServer(tls, (req, res) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      req.resume()
      req.on("end", () => {
        setTimeout(() => {
          eventIds.push(String(req.headers["service-event-id"]))
          inFlight--
          res.writeHead(200)
          res.end("ok")
        }, 300)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return {
      port: (server.address() as { port: number }).port,
      eventIds,
      maxInFlight: () => maxInFlight,
      server
    }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** The service on the machines' NATS, its merchant, and a connection to its database. */
class Fixture extends Context.Tag("test/LinesFixture")<
  Fixture,
  { readonly api: MerchantClient; readonly db: pg.Client }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const service = yield* scopedService({
      webhookNetwork: localReceiverNetwork(HOST, tls.ca),
      config: { natsUrl: Option.some("nats://127.0.0.1:4222"), rateLimitCapacity: 10_000 }
    })
    const api = yield* newMerchantClient(service)
    const db = yield* scopedPgClient(service.databaseUrl)
    return { api, db }
  })
)

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("a burst to one endpoint", () => {
    it.scoped(
      "holds the endpoint to its cap, attempts every job once and leaves none in line",
      () =>
        Effect.gen(function* () {
          const { api, db } = yield* Fixture
          const receiver = yield* slowReceiver
          const created = yield* Effect.promise(() =>
            api.call<{ id: string }>("POST", "/v1/webhooks", {
              url: `https://${HOST}:${receiver.port}/lined`
            })
          )
          const endpointId = created.body.id
          const queued = yield* Effect.promise(() =>
            Promise.all(
              Array.from({ length: BURST }, () =>
                api.call<{ event_id: string }>("POST", `/v1/webhooks/${endpointId}/test`)
              )
            )
          )
          assert.isTrue(queued.every((q) => q.status === 202))
          yield* eventually(
            Effect.sync(() => receiver.eventIds.length >= BURST),
            30_000
          )
          // Let anything sent twice arrive before counting.
          yield* pause(500)

          assert.strictEqual(receiver.eventIds.length, BURST)
          assert.deepStrictEqual(new Set(receiver.eventIds), new Set(queued.map((q) => q.body.event_id)))
          // The cap was reached (the line was used) and never passed.
          assert.strictEqual(receiver.maxInFlight(), DISPATCH_PER_ENDPOINT)
          const attempts = yield* Effect.promise(() =>
            db.query<{ outcome: string; n: number }>(
              "select outcome, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by outcome",
              [endpointId.slice("wh_".length)]
            )
          )
          assert.deepStrictEqual(attempts.rows, [{ outcome: "succeeded", n: BURST }])
        }),
      60_000
    )
  })
})
