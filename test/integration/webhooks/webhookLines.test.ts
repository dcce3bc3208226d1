import { createServer, type Server } from "node:https"
import { Option } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DISPATCH_PER_ENDPOINT } from "../../../services/webhooks/WebhookDispatcher"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { localReceiverNetwork, makeCertificates } from "../../support/HttpsReceiver"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

// A burst to one endpoint waits in that endpoint's line on the instance: never more than the cap in flight, every
// job attempted once, none left behind.

const HOST = "lined-hooks.example.test"
const tls = makeCertificates(HOST)
const BURST = 64

let service: RunningService
let api: MerchantClient
let db: pg.Client

/** An HTTPS receiver that answers 200 after 300 ms (long enough for the burst to pile up behind the cap) and counts how many requests it holds at once. */
const startSlowReceiver = async () => {
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

beforeAll(async () => {
  service = await startService({
    webhookNetwork: localReceiverNetwork(HOST, tls.ca),
    config: { natsUrl: Option.some("nats://127.0.0.1:4222"), rateLimitCapacity: 10_000 }
  })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
  db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await service?.stop()
})

describe("a burst to one endpoint", () => {
  it("holds the endpoint to its cap, attempts every job once and leaves none in line", async () => {
    const receiver = await startSlowReceiver()
    try {
      const created = await api.call<{ id: string }>("POST", "/v1/webhooks", {
        url: `https://${HOST}:${receiver.port}/lined`
      })
      const endpointId = created.body.id
      const queued = await Promise.all(
        Array.from({ length: BURST }, () =>
          api.call<{ event_id: string }>("POST", `/v1/webhooks/${endpointId}/test`)
        )
      )
      expect(queued.every((q) => q.status === 202)).toBe(true)
      const until = Date.now() + 30_000
      while (receiver.eventIds.length < BURST && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50))
      // Let anything sent twice arrive before counting.
      await new Promise((r) => setTimeout(r, 500))

      expect(receiver.eventIds.length).toBe(BURST)
      expect(new Set(receiver.eventIds)).toEqual(new Set(queued.map((q) => q.body.event_id)))
      // The cap was reached (the line was used) and never passed.
      expect(receiver.maxInFlight()).toBe(DISPATCH_PER_ENDPOINT)
      const attempts = await db.query<{ outcome: string; n: number }>(
        "select outcome, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by outcome",
        [endpointId.slice("wh_".length)]
      )
      expect(attempts.rows).toEqual([{ outcome: "succeeded", n: BURST }])
    } finally {
      await receiver.close()
    }
  }, 60_000)
})
