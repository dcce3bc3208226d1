import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { merchantClient } from "../../support/Api"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type PostgresCluster, startPostgresCluster } from "../../support/PostgresCluster"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 39: the database goes away under the service (a crash: `pg_ctl stop -m immediate`) and comes back. While
 * it is away, every call is answered, promptly, with 503 `service_unavailable` (or from memory), never a 500 and
 * never a hang; once it is back, the same instance serves again without a restart. The cluster is the test's own,
 * in a temporary directory, so killing it touches nothing else.
 */
const HOST = "hooks.database-away.test"
const tls = makeCertificates(HOST)
let receiver: Awaited<ReturnType<typeof startReceiver>>
let cluster: PostgresCluster
let service: RunningService
let merchant: Merchant
let references: { issuerId: string; payoutAddressId: string }

beforeAll(async () => {
  cluster = await startPostgresCluster()
  receiver = await startReceiver(tls)
  service = await startService({
    database: { url: cluster.url, drop: async () => {} },
    webhookNetwork: localReceiverNetwork(HOST, tls.ca)
  })
  merchant = await createMerchant(service.databaseUrl)
  references = await merchantClient(service, merchant).setup()
}, 120_000)
afterAll(async () => {
  await service?.stop()
  await cluster?.destroy()
  await receiver?.close()
})

const ANSWER_WITHIN_MS = 10_000

/** A call with a deadline: a hang fails the test instead of holding it. */
const call = async (path: string, init: RequestInit = {}) => {
  const started = Date.now()
  const res = await service.request(path, { ...init, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) })
  const body = (await res.json().catch(() => null)) as { error?: { code: string } } | null
  return {
    status: res.status,
    code: body?.error?.code,
    message: (body?.error as { message?: string } | undefined)?.message,
    ms: Date.now() - started,
    retryAfter: res.headers.get("retry-after")
  }
}

const create = () =>
  call("/v1/deposit-requests", {
    method: "POST",
    headers: merchant.headers("api_key", {
      "content-type": "application/json",
      "idempotency-key": randomUUID()
    }),
    body: JSON.stringify({
      amount: "1.500000",
      issuer_id: references.issuerId,
      payout_address_id: references.payoutAddressId
    })
  })

describe("the database away and back", () => {
  it("answers 503 service_unavailable while it is away, and serves again once it is back, without a restart", async () => {
    const before = await create()
    expect(before.status).toBe(201)
    const created = (await (
      await service.request("/v1/deposit-requests?limit=1", { headers: merchant.headers() })
    ).json()) as { deposit_requests: Array<{ id: string }> }
    const id = created.deposit_requests[0]!.id

    await cluster.stop("immediate")
    const away = [
      await create(),
      await call(`/v1/deposit-requests/${id}`, { headers: merchant.headers() }),
      await call("/v1/deposit-requests", { headers: merchant.headers() }),
      await call(`/v1/payer/deposit-requests/${id}`),
      await call("/v1/webhooks", { headers: merchant.headers() }),
      await call("/v1/health")
    ]
    for (const answer of away) {
      // Nothing else but a refusal that says to come back, with when.
      expect(answer).toMatchObject({ status: 503, code: "service_unavailable" })
      expect(Number(answer.retryAfter)).toBeGreaterThan(0)
    }

    await cluster.start()
    // The pool reconnects on its own: the same instance, no restart.
    const until = Date.now() + 30_000
    let again = await create()
    while (again.status !== 201 && Date.now() < until) {
      expect(again.status).toBe(503)
      await new Promise((resolve) => setTimeout(resolve, 250))
      again = await create()
    }
    expect(again.status).toBe(201)
    expect((await call(`/v1/deposit-requests/${id}`, { headers: merchant.headers() })).status).toBe(200)
    // Health probes again (its last probe saw the outage), and a pooled connection the crash broke may fail once.
    let health = await call("/v1/health")
    while (health.status !== 200 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      health = await call("/v1/health")
    }
    expect(health.status).toBe(200)

    // The workers came back too: the outbox relay and the dispatcher deliver a test event made after the outage.
    const client = merchantClient(service, merchant)
    const endpoint = await client.call<{ id: string }>("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}/hooks`
    })
    expect(endpoint.status).toBe(201)
    const test = await client.call<{ event_id: string }>("POST", `/v1/webhooks/${endpoint.body.id}/test`)
    expect(test.status).toBe(202)
    const deliveredBy = Date.now() + 30_000
    while (
      !receiver.received.some((r) => r.body.toString().includes(test.body.event_id)) &&
      Date.now() < deliveredBy
    )
      await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.received.some((r) => r.body.toString().includes(test.body.event_id))).toBe(true)
  }, 120_000)

  it("answers a long poll that ends while the database is away with 503 service_unavailable, not a 500", async () => {
    // Found by the chaos run (issue 39): a parked poll re-reads its request when it wakes or times out, and that
    // read's failure was answered 500 whatever it was.
    const made = await create()
    expect(made.status).toBe(201)
    const list = (await (
      await service.request("/v1/deposit-requests?limit=1", { headers: merchant.headers() })
    ).json()) as { deposit_requests: Array<{ id: string; version: string }> }
    const { id, version } = list.deposit_requests[0]!
    const held = call(`/v1/deposit-requests/${id}?wait_for=change&version=${version}&timeout=2`, {
      headers: merchant.headers()
    })
    // Parked (its first read saw the version unchanged) before the database goes.
    await new Promise((resolve) => setTimeout(resolve, 500))
    await cluster.stop("immediate")
    try {
      const answer = await held
      expect(answer).toMatchObject({ status: 503, code: "service_unavailable" })
      expect(Number(answer.retryAfter)).toBeGreaterThan(0)
    } finally {
      await cluster.start()
    }
  }, 60_000)
})
