import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

type Body = Record<string, unknown> & { id: string; error: { code: string; param?: string } }
let service: RunningService
let api: MerchantClient

beforeAll(async () => {
  service = await startService({ config: { rateLimitCapacity: 10_000 } })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
})
afterAll(async () => {
  await service?.stop()
})

describe("customers", () => {
  it("creates, reads, patches (null clears), lists and deletes", async () => {
    const made = await api.call<Body>("POST", "/v1/customers", {
      name: "Ada",
      email: "ada@example.com",
      metadata: { tier: "gold" }
    })
    expect(made.status).toBe(201)
    expect(made.body.id).toMatch(/^cus_/)
    expect(made.body).toMatchObject({
      name: "Ada",
      email: "ada@example.com",
      description: null,
      metadata: { tier: "gold" }
    })
    const patched = await api.call<Body>("PATCH", `/v1/customers/${made.body.id}`, {
      email: null,
      description: "VIP"
    })
    expect(patched.body).toMatchObject({
      name: "Ada",
      email: null,
      description: "VIP",
      metadata: { tier: "gold" }
    })
    const list = await api.call<{ customers: Array<Body>; next_cursor: string | null }>(
      "GET",
      "/v1/customers?limit=1"
    )
    expect(list.body.customers[0]?.id).toBe(made.body.id)
    expect((await api.call("DELETE", `/v1/customers/${made.body.id}`)).status).toBe(204)
    const gone = await api.call<Body>("GET", `/v1/customers/${made.body.id}`)
    expect(gone.status).toBe(404)
    expect(gone.body.error.code).toBe("customer_not_found")
  })

  it("refuses bad fields naming them", async () => {
    for (const [body, param] of [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x", email: "not-an-email" }, "email"],
      [{ name: "x", extra: 1 }, "extra"],
      [
        { name: "x", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
        "metadata"
      ],
      [{ name: "x", metadata: { ["k".repeat(41)]: "v" } }, "metadata"],
      [{ name: "x", metadata: { k: "v".repeat(501) } }, "metadata"]
    ] as const) {
      const res = await api.call<Body>("POST", "/v1/customers", body)
      expect(res.status).toBe(400)
      expect(res.body.error.param?.startsWith(param)).toBe(true)
    }
  })
})

describe("issuers", () => {
  it("creates with a display name, refuses a non-https support URL, deletes", async () => {
    const made = await api.call<Body>("POST", "/v1/issuers", {
      display_name: "Acme",
      support_url: "https://acme.example/help"
    })
    expect(made.status).toBe(201)
    expect(made.body.id).toMatch(/^iss_/)
    const bad = await api.call<Body>("POST", "/v1/issuers", {
      display_name: "Acme",
      support_url: "http://acme.example"
    })
    expect(bad.body.error.param).toBe("support_url")
    expect((await api.call("DELETE", `/v1/issuers/${made.body.id}`)).status).toBe(204)
    expect((await api.call("GET", `/v1/issuers/${made.body.id}`)).status).toBe(404)
  })
})

describe("payout addresses", () => {
  it("stores EIP-55 from any case, refuses the zero address and address changes, disables but stays readable", async () => {
    const made = await api.call<Body>("POST", "/v1/payout-addresses", {
      address: "0x52908400098527886E0F7030069857D2E4169EE7".toLowerCase(),
      label: "treasury"
    })
    expect(made.status).toBe(201)
    expect(made.body.address).toBe("0x52908400098527886E0F7030069857D2E4169EE7")
    const zero = await api.call<Body>("POST", "/v1/payout-addresses", { address: `0x${"0".repeat(40)}` })
    expect(zero.body.error.param).toBe("address")
    const change = await api.call<Body>("PATCH", `/v1/payout-addresses/${made.body.id}`, {
      address: `0x${"1".repeat(40)}`
    })
    expect(change.status).toBe(400)
    expect(change.body.error.param).toBe("address")
    const disabled = await api.call<Body>("POST", `/v1/payout-addresses/${made.body.id}/disable`)
    expect(disabled.status).toBe(200)
    expect(disabled.body.disabled_at).toMatch(/Z$/)
    expect((await api.call<Body>("GET", `/v1/payout-addresses/${made.body.id}`)).body.disabled_at).toBe(
      disabled.body.disabled_at
    )
    const issuer = await api.call<Body>("POST", "/v1/issuers", { display_name: "Acme" })
    const refused = await api.call<Body>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: made.body.id },
      { "idempotency-key": randomUUID() }
    )
    expect(refused.status).toBe(400)
    expect(refused.body.error.param).toBe("payout_address_id")
  })
})
