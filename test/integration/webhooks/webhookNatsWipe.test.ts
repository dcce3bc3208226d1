import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActorHost } from "../../../services/actors/ActorHost"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { createMerchant } from "../../support/Merchant"
import { privateNats } from "../../support/NatsServer"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 7 (and 20): NATS stopped mid-flow and restarted with its store wiped loses no event. Events are written
 * with the state change (outbox), their delivery jobs are rows in PostgreSQL, and JetStream carries each job's
 * message: a broker that vanishes (and comes back empty) has its jobs published again from PostgreSQL, so it may
 * delay a delivery, never lose or repeat one.
 */
const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

let nats: Awaited<ReturnType<typeof privateNats>>
let receiver: Awaited<ReturnType<typeof startReceiver>>
let service: RunningService
let api: MerchantClient

const waitFor = async (check: () => boolean, ms = 20_000) => {
  const until = Date.now() + ms
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  expect(check()).toBe(true)
}

beforeAll(async () => {
  nats = await privateNats()
  receiver = await startReceiver(tls, () => 200)
  const network = localReceiverNetwork(HOST, tls.ca)
  service = await startService({
    webhookNetwork: network,
    config: {
      natsUrl: Option.some(nats.url),
      webhookFirstRetryMs: 200,
      rateLimitCapacity: 10_000
    }
  })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
})
afterAll(async () => {
  await service?.stop()
  await receiver?.close()
  await nats?.stop()
})

describe("NATS wiped mid-flow", () => {
  it("delivers every event exactly once when the broker dies, loses its store and comes back", async () => {
    await api.call("POST", "/v1/webhooks", { url: `https://${HOST}:${receiver.port}/hooks` })
    const refs = await api.setup()
    const ids: Array<string> = []
    for (let i = 0; i < 6; i++) {
      const created = await api.call<{ id: string }>(
        "POST",
        "/v1/deposit-requests",
        { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
        { "idempotency-key": `wipe-${Date.now()}-${i}` }
      )
      expect(created.status).toBe(201)
      ids.push(created.body.id.slice(3))
    }
    const makeReady = (uuid: string) =>
      service.runtime.runPromise(
        Effect.flatMap(ActorHost, (h) =>
          h.apply(uuid, `wipe-attest-${uuid}`, {
            type: "payer.wallet_attested",
            at: new Date().toISOString(),
            wallet: "0x1111111111111111111111111111111111111111",
            address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
          })
        )
      )
    const readyEvents = () =>
      new Set(
        receiver.received
          .filter((r) => r.headers["service-event-type"] === "deposit_request.ready")
          .map((r) => String(r.headers["service-event-id"]))
      )

    // Two changes while the broker is up: delivered as usual.
    await makeReady(ids[0]!)
    await makeReady(ids[1]!)
    await waitFor(() => readyEvents().size === 2)

    // The broker dies and its store is wiped; changes keep committing meanwhile.
    await nats.killAndWipe()
    await makeReady(ids[2]!)
    await makeReady(ids[3]!)
    // It comes back empty on the same address; more changes follow.
    await nats.start()
    await makeReady(ids[4]!)
    await makeReady(ids[5]!)

    await waitFor(() => readyEvents().size === 6)
    // Exactly once each: no event was delivered twice (every answer was 200), and each request has its event.
    const ready = receiver.received.filter((r) => r.headers["service-event-type"] === "deposit_request.ready")
    expect(ready).toHaveLength(6)
    const about = ready.map(
      (r) => (JSON.parse(r.body.toString("utf8")) as { data: { deposit_request: { id: string } } }).data
    )
    expect(new Set(about.map((d) => d.deposit_request.id.slice(3)))).toEqual(new Set(ids))
  })
})
