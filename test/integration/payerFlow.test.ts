import { randomUUID } from "node:crypto"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { typedData } from "../../services/WalletAttestation"
import { type MerchantClient, merchantClient } from "../support/Api"
import { createMerchant } from "../support/Merchant"
import { type RunningService, startService } from "../support/Service"

type PayerView = Record<string, unknown> & {
  id: string
  status: string
  address: string | null
  version: string
}
type ErrorBody = { error: { code: string; param?: string } }

let service: RunningService
let api: MerchantClient
let refs: { issuerId: string; payoutAddressId: string }

beforeAll(async () => {
  service = await startService({
    config: {
      rateLimitCapacity: 10_000,
      tokenAddress: Option.some("0x1c7d4b196cb0c7b01d743fbc6116a902379c7238")
    }
  })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
  refs = await api.setup()
})
afterAll(async () => {
  await service?.stop()
})

const create = (extra: Record<string, unknown> = {}) =>
  api.call<{ id: string; merchant_session_secret?: string }>(
    "POST",
    "/v1/deposit-requests",
    {
      amount: "12.5",
      heading: "Order 42",
      reference: "private-ref",
      metadata: { secret: "x" },
      issuer_id: refs.issuerId,
      payout_address_id: refs.payoutAddressId,
      ...extra
    },
    { "idempotency-key": randomUUID() }
  )

const payer = async <T = PayerView>(method: string, path: string, body?: unknown) => {
  const res = await service.request(path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
  })
  return { status: res.status, body: (await res.json()) as T & ErrorBody }
}

const sign = async (
  requestId: string,
  opts: { chainId?: number; expiresAt?: number; forRequest?: string } = {}
) => {
  const account = privateKeyToAccount(generatePrivateKey())
  const statement = {
    depositRequest: opts.forRequest ?? requestId,
    wallet: account.address,
    chainId: opts.chainId ?? 10143,
    expiresAt: opts.expiresAt ?? Math.floor(Date.now() / 1000) + 600
  }
  const signature = await account.signTypedData(typedData(statement))
  return {
    account,
    body: {
      wallet: account.address.toLowerCase(),
      chain_id: statement.chainId,
      expires_at: statement.expiresAt,
      signature
    }
  }
}

describe("the payer flow", () => {
  it("shows a payer only what is safe, then releases a one-time address on a valid wallet statement", async () => {
    const made = await create()
    const view = await payer("GET", `/v1/payer/deposit-requests/${made.body.id}`)
    expect(view.status).toBe(200)
    expect(view.body).toMatchObject({
      status: "awaiting_payer",
      amount: "12.500000",
      heading: "Order 42",
      issuer_display_name: "Acme Books",
      wallet_required: true,
      address: null
    })
    for (const key of ["metadata", "reference", "expected_email", "payer_reference", "payout_address_id"])
      expect(view.body).not.toHaveProperty(key)
    const { account, body } = await sign(made.body.id)
    const attested = await payer("POST", `/v1/payer/deposit-requests/${made.body.id}/wallet`, body)
    expect(attested.status).toBe(200)
    expect(attested.body.status).toBe("ready")
    expect(attested.body.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(attested.body.payment_link).toBe(
      `ethereum:0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238@10143/transfer?address=${attested.body.address}&uint256=12500000`
    )
    const merchantView = await api.call<{ payer_wallet: string; address: string; status: string }>(
      "GET",
      `/v1/deposit-requests/${made.body.id}`
    )
    expect(merchantView.body).toMatchObject({
      status: "ready",
      payer_wallet: account.address,
      address: attested.body.address
    })
    // The same signed statement again, on this or any request, is refused.
    const replay = await payer("POST", `/v1/payer/deposit-requests/${made.body.id}/wallet`, body)
    expect(replay.status).toBe(409)
    const events = await api.call<{ events: Array<{ type: string }> }>(
      "GET",
      `/v1/events?deposit_request_id=${made.body.id}`
    )
    expect(events.body.events.map((e) => e.type)).toEqual(["deposit_request.ready"])
  })

  it("refuses statements for another request, chain or wallet, expired ones and bad signatures", async () => {
    const made = await create()
    const other = await create()
    const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
    const forOther = await sign(made.body.id, { forRequest: other.body.id })
    // The service rebuilds the statement from the URL, so one signed for another request cannot verify here.
    expect((await payer("POST", path, forOther.body)).body.error.param).toBe("signature")
    const wrongChain = await sign(made.body.id, { chainId: 143 })
    expect((await payer("POST", path, wrongChain.body)).body.error.param).toBe("chain_id")
    const expired = await sign(made.body.id, { expiresAt: Math.floor(Date.now() / 1000) - 5 })
    expect((await payer("POST", path, expired.body)).body.error.param).toBe("expires_at")
    const stolen = await sign(made.body.id)
    const impostor = privateKeyToAccount(generatePrivateKey())
    const res = await payer("POST", path, { ...stolen.body, wallet: impostor.address })
    expect(res.status).toBe(400)
    expect(res.body.error.param).toBe("signature")
    const garbled = await payer("POST", path, { ...(await sign(made.body.id)).body, signature: "0x1234" })
    expect(garbled.body.error.param).toBe("signature")
    // five refusals recorded as attempts: even a valid statement is now rate limited
    const limited = await payer("POST", path, (await sign(made.body.id)).body)
    expect(limited.status).toBe(429)
    expect(limited.body.error.code).toBe("rate_limited")
    expect((await payer("GET", `/v1/payer/deposit-requests/${made.body.id}`)).body.status).toBe(
      "awaiting_payer"
    )
  })

  it("needs the merchant-session secret before the wallet, refusing a wrong one", async () => {
    const made = await create({ payer_policy_mode: "merchant_session", payer_reference: "user-7" })
    const path = `/v1/payer/deposit-requests/${made.body.id}`
    expect((await payer("GET", path)).body).toMatchObject({
      proof_required: "merchant_session",
      wallet_required: false
    })
    const early = await payer("POST", `${path}/wallet`, (await sign(made.body.id)).body)
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe("invalid_state")
    const wrong = await payer("POST", `${path}/merchant-session`, { secret: "mss_wrong" })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.param).toBe("secret")
    const ok = await payer("POST", `${path}/merchant-session`, { secret: made.body.merchant_session_secret })
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ proof_required: null, wallet_required: true })
    const again = await payer("POST", `${path}/merchant-session`, {
      secret: made.body.merchant_session_secret
    })
    expect(again.status).toBe(409)
    const ready = await payer("POST", `${path}/wallet`, (await sign(made.body.id)).body)
    expect(ready.body.status).toBe("ready")
    const events = await api.call<{ events: Array<{ type: string }> }>(
      "GET",
      `/v1/events?deposit_request_id=${made.body.id}`
    )
    expect(events.body.events.map((e) => e.type).sort()).toEqual([
      "deposit_request.ready",
      "verification.approved"
    ])
  })

  it("gives concurrent attestations on different requests distinct addresses, and one request one address", async () => {
    const made = await Promise.all(Array.from({ length: 6 }, () => create()))
    const results = await Promise.all(
      made.map(async (m) =>
        payer("POST", `/v1/payer/deposit-requests/${m.body.id}/wallet`, (await sign(m.body.id)).body)
      )
    )
    const addresses = results.map((r) => r.body.address)
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(new Set(addresses).size).toBe(6)
    const one = await create()
    const racing = await Promise.all(
      [0, 1, 2].map(async () =>
        payer("POST", `/v1/payer/deposit-requests/${one.body.id}/wallet`, (await sign(one.body.id)).body)
      )
    )
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1)
    expect(racing.filter((r) => r.status === 409)).toHaveLength(2)
  })

  it("answers unknown and malformed ids with 404 and allows any origin on reads", async () => {
    const res = await service.request(`/v1/payer/deposit-requests/dr_${randomUUID()}`, {
      headers: { origin: "https://anyone.example" }
    })
    expect(res.status).toBe(404)
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
    expect((await service.request("/v1/payer/deposit-requests/nope")).status).toBe(404)
  })
})
