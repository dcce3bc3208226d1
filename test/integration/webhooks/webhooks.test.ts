import { createHmac, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActorHost } from "../../../services/actors/ActorHost"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

let service: RunningService
let merchant: Merchant
let api: MerchantClient
let receiver: Awaited<ReturnType<typeof startReceiver>>
let failFirst = 0

/** The spec's verification, written independently of the service's signer. */
const verify = (header: string, secret: string, raw: Buffer, nowSeconds: number) => {
  const parts = header.split(",")
  if (parts[0] !== "v1") return false
  const t = Number(parts.find((p) => p.startsWith("t="))?.slice(2))
  const sig = parts.find((p) => p.startsWith("sha256="))?.slice(7) ?? ""
  if (!Number.isFinite(t) || Math.abs(nowSeconds - t) > 300) return false
  const expected = createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`v1.${t}.`), raw]))
    .digest()
  const given = Buffer.from(sig, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

beforeAll(async () => {
  receiver = await startReceiver(tls, (n) => (n <= failFirst ? 500 : 200))
  const network = localReceiverNetwork(HOST, tls.ca)
  service = await startService({
    webhookNetwork: network,
    config: { webhookFirstRetryMs: 200, rateLimitCapacity: 10_000 }
  })
  merchant = await createMerchant(service.databaseUrl)
  api = merchantClient(service, merchant)
})
afterAll(async () => {
  await service?.stop()
  await receiver?.close()
})

const waitFor = async (check: () => boolean, ms = 15_000) => {
  const until = Date.now() + ms
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  expect(check()).toBe(true)
}

describe("webhook endpoints", () => {
  it("creates an endpoint with a whsec_ secret shown once, refuses hostile URLs, lists and reads without the secret", async () => {
    const created = await api.call<{ id: string; secret: string; url: string; disabled_at: null }>(
      "POST",
      "/v1/webhooks",
      {
        url: `https://${HOST}:${receiver.port}/hooks`
      }
    )
    expect(created.status).toBe(201)
    expect(created.body.secret).toMatch(/^whsec_/)
    expect(created.body.disabled_at).toBeNull()
    const read = await api.call<Record<string, unknown>>("GET", `/v1/webhooks/${created.body.id}`)
    expect(read.body).not.toHaveProperty("secret")
    for (const url of [
      "http://hooks.example.test/x",
      "https://127.0.0.1/x",
      "https://u:p@hooks.example.test/x",
      "https://unknown.test/x"
    ]) {
      const refused = await api.call<{ error: { code: string; param: string } }>("POST", "/v1/webhooks", {
        url
      })
      expect(refused.status).toBe(400)
      expect(refused.body.error.param).toBe("url")
    }
    await api.call("POST", `/v1/webhooks/${created.body.id}/disable`)
  })
})

describe("deliveries", () => {
  it("delivers a lifecycle event signed over its fixed bytes, retrying failures with the same id and bytes", async () => {
    failFirst = 3
    receiver.received.length = 0
    const endpoint = await api.call<{ id: string; secret: string }>("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}/hooks`
    })
    const refs = await api.setup()
    const created = await api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      {
        amount: "7.000000",
        issuer_id: refs.issuerId,
        payout_address_id: refs.payoutAddressId,
        metadata: { order: "1" }
      },
      { "idempotency-key": `wh-${Date.now()}` }
    )
    const uuid = created.body.id.slice(3)
    await service.runtime.runPromise(
      Effect.flatMap(ActorHost, (h) =>
        h.apply(uuid, "wh-attest", {
          type: "payer.wallet_attested",
          at: new Date().toISOString(),
          wallet: "0x1111111111111111111111111111111111111111",
          address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
        })
      )
    )
    await waitFor(() => receiver.received.length >= 4)
    const attempts = receiver.received.slice(0, 4)
    const ids = new Set(attempts.map((r) => r.headers["service-event-id"]))
    expect(ids.size).toBe(1)
    expect(new Set(attempts.map((r) => r.body.toString("utf8"))).size).toBe(1)
    for (const r of attempts) {
      expect(r.headers["content-type"]).toBe("application/json")
      expect(r.headers["service-event-type"]).toBe("deposit_request.ready")
      expect(
        verify(
          String(r.headers["service-signature"]),
          endpoint.body.secret,
          r.body,
          Math.floor(Date.now() / 1000)
        )
      ).toBe(true)
      expect(
        verify(
          String(r.headers["service-signature"]),
          endpoint.body.secret,
          Buffer.concat([r.body, Buffer.from(" ")]),
          Math.floor(Date.now() / 1000)
        )
      ).toBe(false)
    }
    const envelope = JSON.parse(attempts[0]!.body.toString("utf8")) as {
      id: string
      type: string
      data: { deposit_request: Record<string, unknown> }
    }
    expect(envelope.id).toBe(attempts[0]!.headers["service-event-id"])
    expect(Object.keys(envelope.data.deposit_request).sort()).toEqual(
      [
        "id",
        "status",
        "amount",
        "amount_base_units",
        "received",
        "received_base_units",
        "heading",
        "reference",
        "metadata",
        "customer_id",
        "issuer_id",
        "payer_policy_mode",
        "payer_reference",
        "verification_completed_at",
        "likely_unsolicited_at",
        "payer_wallet",
        "address",
        "wallet_bound_at",
        "expires_at",
        "created_at"
      ].sort()
    )
    // The receiver has the fourth attempt; its outcome is recorded once the dispatcher has read the answer.
    type Delivery = { attempt: number; outcome: string; response_status: number; event_id: string }
    const deliveriesOfEvent = async () =>
      (
        await api.call<{ deliveries: Array<Delivery> }>("GET", `/v1/webhooks/${endpoint.body.id}/deliveries`)
      ).body.deliveries
        .filter((d) => d.event_id === envelope.id)
        .sort((a, b) => a.attempt - b.attempt)
    let forEvent = await deliveriesOfEvent()
    const logged = Date.now() + 10_000
    while (Date.now() < logged && !forEvent.some((d) => d.outcome === "succeeded")) {
      await new Promise((r) => setTimeout(r, 50))
      forEvent = await deliveriesOfEvent()
    }
    expect(forEvent.map((d) => [d.attempt, d.outcome, d.response_status])).toEqual([
      [1, "retrying", 500],
      [2, "retrying", 500],
      [3, "retrying", 500],
      [4, "succeeded", 200]
    ])

    // The events list shows the same bytes, and a redelivery starts a new series with the same id.
    const events = await api.call<{ events: Array<{ id: string }> }>(
      "GET",
      `/v1/events?type=deposit_request.ready&deposit_request_id=${created.body.id}`
    )
    expect(events.body.events.map((e) => e.id)).toEqual([envelope.id])
    const before = receiver.received.length
    const again = await api.call("POST", `/v1/events/${envelope.id}/redeliver`, {
      webhook_id: endpoint.body.id
    })
    expect(again.status).toBe(202)
    await waitFor(() => receiver.received.length > before)
    expect(receiver.received.at(-1)?.body.toString("utf8")).toBe(attempts[0]!.body.toString("utf8"))

    // A disabled endpoint gets nothing more.
    await api.call("POST", `/v1/webhooks/${endpoint.body.id}/disable`)
    const test = await api.call<{ error: { code: string } }>("POST", `/v1/webhooks/${endpoint.body.id}/test`)
    expect(test.status).toBe(409)
    expect(test.body.error.code).toBe("invalid_state")
    const count = receiver.received.length
    await new Promise((r) => setTimeout(r, 800))
    expect(receiver.received.length).toBe(count)
  })

  it("sends webhook.test to one endpoint only", async () => {
    failFirst = 0
    receiver.received.length = 0
    const a = await api.call<{ id: string }>("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}/a`
    })
    const b = await api.call<{ id: string }>("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}/b`
    })
    const queued = await api.call<{ event_id: string }>("POST", `/v1/webhooks/${a.body.id}/test`)
    expect(queued.status).toBe(202)
    await waitFor(() => receiver.received.some((r) => r.headers["service-event-id"] === queued.body.event_id))
    await new Promise((r) => setTimeout(r, 500))
    const hits = receiver.received.filter((r) => r.headers["service-event-id"] === queued.body.event_id)
    expect(hits).toHaveLength(1)
    expect(hits[0]?.headers["service-event-type"]).toBe("webhook.test")
    await api.call("POST", `/v1/webhooks/${a.body.id}/disable`)
    await api.call("POST", `/v1/webhooks/${b.body.id}/disable`)
  })

  it("never follows a redirect (here to a loopback address): the attempt is logged as redirect_refused", async () => {
    const redirector = await startReceiver(tls, () => 302)
    try {
      const endpoint = await api.call<{ id: string }>("POST", "/v1/webhooks", {
        url: `https://${HOST}:${redirector.port}/hooks`
      })
      const queued = await api.call<{ event_id: string }>("POST", `/v1/webhooks/${endpoint.body.id}/test`)
      expect(queued.status).toBe(202)
      type Delivery = {
        event_id: string
        outcome: string
        response_status: number | null
        error_kind: string | null
      }
      let logged: Array<Delivery> = []
      const until = Date.now() + 15_000
      while (Date.now() < until && logged.length === 0) {
        logged = (
          await api.call<{ deliveries: Array<Delivery> }>(
            "GET",
            `/v1/webhooks/${endpoint.body.id}/deliveries`
          )
        ).body.deliveries.filter((d) => d.event_id === queued.body.event_id)
        if (logged.length === 0) await new Promise((r) => setTimeout(r, 50))
      }
      expect(logged[0]).toMatchObject({ outcome: "retrying", error_kind: "redirect_refused" })
      // Only the delivery itself (and its retries) reached the redirector: nothing went where it pointed.
      expect(redirector.received.length).toBeGreaterThanOrEqual(1)
      for (const r of redirector.received) expect(r.headers["service-event-id"]).toBe(queued.body.event_id)
      await api.call("POST", `/v1/webhooks/${endpoint.body.id}/disable`)
    } finally {
      await redirector.close()
    }
  })

  it("fails a delivery for good after 12 attempts", async () => {
    // A service of its own whose schedule starts at 2 ms (2 ms … 2 s, ~4 s in all): the gaps are the stream's
    // redelivery delays, so the test waits for them rather than moving due times in the database.
    const fast = await startService({
      webhookNetwork: localReceiverNetwork(HOST, tls.ca),
      config: { webhookFirstRetryMs: 2, rateLimitCapacity: 10_000 }
    })
    const client = new pg.Client({ connectionString: fast.databaseUrl })
    await client.connect()
    try {
      failFirst = 1_000_000
      const fastApi = merchantClient(fast, await createMerchant(fast.databaseUrl))
      const endpoint = await fastApi.call<{ id: string }>("POST", "/v1/webhooks", {
        url: `https://${HOST}:${receiver.port}/dead`
      })
      const queued = await fastApi.call<{ event_id: string }>("POST", `/v1/webhooks/${endpoint.body.id}/test`)
      const eventUuid = queued.body.event_id.slice(4)
      const state = async () =>
        (
          await client.query<{ state: string; attempts: number }>(
            "select state, attempts from webhook_jobs where event_id = $1",
            [eventUuid]
          )
        ).rows[0]
      const until = Date.now() + 30_000
      while (Date.now() < until && (await state())?.state !== "failed")
        await new Promise((r) => setTimeout(r, 100))
      expect(await state()).toEqual({ state: "failed", attempts: 12 })
      const log = await fastApi.call<{
        deliveries: Array<{ outcome: string; next_attempt_at: string | null }>
      }>("GET", `/v1/webhooks/${endpoint.body.id}/deliveries?limit=100`)
      expect(log.body.deliveries).toHaveLength(12)
      expect(log.body.deliveries[0]).toMatchObject({ outcome: "failed", next_attempt_at: null })
      expect(log.body.deliveries.slice(1).every((d) => d.outcome === "retrying")).toBe(true)
      // Nothing is attempted after the last: the message was acked, not left to come back.
      await new Promise((r) => setTimeout(r, 1_500))
      expect((await state())?.attempts).toBe(12)
    } finally {
      await client.end()
      failFirst = 0
      await fast.stop()
    }
  })
})
