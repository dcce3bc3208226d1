import { randomUUID } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

let service: RunningService
let alice: MerchantClient
let bob: MerchantClient
let bobMerchant: Merchant
const owned: Record<string, string> = {}

beforeAll(async () => {
  service = await startService({ config: { rateLimitCapacity: 10_000 } })
  alice = merchantClient(service, await createMerchant(service.databaseUrl))
  bobMerchant = await createMerchant(service.databaseUrl)
  bob = merchantClient(service, bobMerchant)
  const refs = await alice.setup()
  owned.issuer = refs.issuerId
  owned.payout = refs.payoutAddressId
  owned.customer = (await alice.call<{ id: string }>("POST", "/v1/customers", { name: "Ada" })).body.id
  owned.request = (
    await alice.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
  ).body.id
})
afterAll(async () => {
  await service?.stop()
})

/** Every merchant route that takes an id: routes added later append a row here. */
const routes = (): Array<[method: string, path: string, body: unknown, code: string]> => [
  ["GET", `/v1/deposit-requests/${owned.request}`, undefined, "deposit_request_not_found"],
  ["PATCH", `/v1/deposit-requests/${owned.request}`, { heading: "mine now" }, "deposit_request_not_found"],
  ["GET", `/v1/deposit-requests/${owned.request}/transfers`, undefined, "deposit_request_not_found"],
  ["GET", `/v1/deposit-requests/${owned.request}/recoveries`, undefined, "deposit_request_not_found"],
  ["GET", `/v1/deposit-requests/${owned.request}/deliveries`, undefined, "deposit_request_not_found"],
  ["GET", `/v1/deposit-requests/${owned.request}/steps`, undefined, "deposit_request_not_found"],
  ["GET", `/v1/deposit-requests/${owned.request}/steps/stately`, undefined, "deposit_request_not_found"],
  ["GET", `/v1/customers/${owned.customer}`, undefined, "customer_not_found"],
  ["PATCH", `/v1/customers/${owned.customer}`, { name: "Eve" }, "customer_not_found"],
  ["DELETE", `/v1/customers/${owned.customer}`, undefined, "customer_not_found"],
  ["GET", `/v1/issuers/${owned.issuer}`, undefined, "issuer_not_found"],
  ["PATCH", `/v1/issuers/${owned.issuer}`, { display_name: "Eve" }, "issuer_not_found"],
  ["DELETE", `/v1/issuers/${owned.issuer}`, undefined, "issuer_not_found"],
  ["GET", `/v1/payout-addresses/${owned.payout}`, undefined, "payout_address_not_found"],
  ["PATCH", `/v1/payout-addresses/${owned.payout}`, { label: "Eve" }, "payout_address_not_found"],
  ["POST", `/v1/payout-addresses/${owned.payout}/disable`, undefined, "payout_address_not_found"]
]

describe("tenant isolation", () => {
  it("answers another account's ids with 404 on every route that takes an id, and changes nothing", async () => {
    const client = new pg.Client({ connectionString: service.databaseUrl })
    await client.connect()
    const snapshot = async () =>
      JSON.stringify(
        await Promise.all(
          ["deposit_requests", "customers", "issuers", "payout_addresses"].map(
            async (t) => (await client.query(`select * from ${t} order by id`)).rows
          )
        )
      )
    try {
      const before = await snapshot()
      for (const [method, path, body, code] of routes()) {
        const res = await bob.call<{ error: { code: string } }>(method, path, body)
        expect({ method, path, status: res.status, code: res.body.error.code }).toEqual({
          method,
          path,
          status: 404,
          code
        })
      }
      expect(await snapshot()).toBe(before)
      // and the owner still reaches every one of them
      for (const [method, path] of routes().filter(([m]) => m === "GET")) {
        expect((await alice.call(method, path)).status).toBe(200)
      }
    } finally {
      await client.end()
    }
  })

  it("answers another account's request with 404 on the session-only resume route", async () => {
    const res = await service.request(`/v1/deposit-requests/${owned.request}/resume`, {
      method: "POST",
      headers: bobMerchant.headers("session")
    })
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("deposit_request_not_found")
  })

  it("keeps merchant resource lists within the account, even when paged from another account's id", async () => {
    const lists: Array<[path: string, plural: string, id: string]> = [
      ["/v1/customers", "customers", owned.customer!],
      ["/v1/issuers", "issuers", owned.issuer!],
      ["/v1/payout-addresses", "payout_addresses", owned.payout!]
    ]
    const bobsOwn = (await bob.call<{ id: string }>("POST", "/v1/customers", { name: "Bob's" })).body.id
    for (const [path, plural, aliceId] of lists) {
      for (const query of ["?limit=100", `?limit=100&starting_after=${aliceId}`]) {
        const res = await bob.call<Record<string, Array<{ id: string }>>>("GET", `${path}${query}`)
        expect(res.status).toBe(200)
        const ids = (res.body[plural] ?? []).map((r) => r.id)
        expect(ids).not.toContain(aliceId)
        // another account's id is only a position: whatever comes back is Bob's own
        for (const id of ids) expect((await bob.call("GET", `${path}/${id}`)).status).toBe(200)
      }
    }
    expect(
      (await alice.call<{ customers: Array<{ id: string }> }>("GET", "/v1/customers")).body.customers.map(
        (c) => c.id
      )
    ).not.toContain(bobsOwn)
  })

  it("keeps lists and body references within the account", async () => {
    const list = await bob.call<{ deposit_requests: Array<unknown> }>("GET", "/v1/deposit-requests")
    expect(list.body.deposit_requests).toEqual([])
    const bobRefs = await bob.setup()
    const borrowed = await bob.call<{ error: { code: string } }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: owned.issuer, payout_address_id: bobRefs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    expect(borrowed.status).toBe(404)
    expect(borrowed.body.error.code).toBe("issuer_not_found")
  })
})
