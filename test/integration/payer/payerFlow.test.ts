import { randomUUID } from "node:crypto"
import { Option } from "effect"
import pg from "pg"
import { hashTypedData } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilHandle, startAnvil } from "../../../infra/chain/Anvil"
import { typedData } from "../../../services/payer/WalletAttestation"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { deployContractWallet } from "../../support/ContractWallet"
import { ControlledClock } from "../../support/ControlledClock"
import { type ReceivedMail, startSmtpInbox } from "../../support/SmtpInbox"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

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
      amount: "12.500000",
      heading: "Order 42",
      reference: "private-ref",
      metadata: { secret: "x" },
      issuer_id: refs.issuerId,
      payout_address_id: refs.payoutAddressId,
      ...extra
    },
    { "idempotency-key": randomUUID() }
  )

const payer = <T = PayerView>(method: string, path: string, body?: unknown) =>
  payerOn<T>(service, method, path, body)

const payerOn = async <T = PayerView>(on: RunningService, method: string, path: string, body?: unknown) => {
  const res = await on.request(path, {
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

/** Every field of the payer read: a new field must be added here on purpose, after asking whether it is private. */
const PAYER_FIELDS = [
  "address",
  "amount",
  "amount_base_units",
  "attachments",
  "attestation",
  "chain_id",
  "expires_at",
  "heading",
  "id",
  "issuer_display_name",
  "payer_policy_mode",
  "payment_link",
  "proof_required",
  "received",
  "received_base_units",
  "returns",
  "status",
  "token_address",
  "version",
  "wallet_required"
]

describe("the payer flow", () => {
  it("shows a payer only what is safe, then releases a one-time address on a valid wallet statement", async () => {
    const made = await create()
    const view = await payer("GET", `/v1/payer/deposit-requests/${made.body.id}`)
    expect(view.status).toBe(200)
    expect(Object.keys(view.body).sort()).toEqual(PAYER_FIELDS)
    expect(JSON.stringify(view.body)).not.toContain("private-ref")
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
    const before = await payer("GET", path)
    expect(before.body).toMatchObject({
      proof_required: "merchant_session",
      wallet_required: false,
      attestation: null
    })
    expect(Object.keys(before.body).sort()).toEqual(PAYER_FIELDS)
    expect(JSON.stringify(before.body)).not.toContain("user-7")
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
    expect(await attemptsOf(service, made.body.id)).toEqual([
      "merchant_session:refused",
      "merchant_session:accepted",
      "wallet:accepted"
    ])
  })

  it("hands a wallet the typed data to sign, and answers a held long poll when the address is released", async () => {
    const made = await create()
    const path = `/v1/payer/deposit-requests/${made.body.id}`
    const view = await payer<PayerView & { attestation: unknown }>("GET", path)
    const { domain, types, primary_type, message } = view.body.attestation as {
      domain: { name: string; version: string; chainId: number }
      types: Record<string, Array<{ name: string; type: string }>>
      primary_type: string
      message: { depositRequest: string; chainId: number }
    }
    expect(message).toEqual({ depositRequest: made.body.id, chainId: 10143 })
    const account = privateKeyToAccount(generatePrivateKey())
    const expiresAt = Math.floor(Date.now() / 1000) + 300
    // Exactly what a browser hands to eth_signTypedData_v4: the served template plus wallet and deadline.
    const signature = await account.signTypedData({
      domain,
      types,
      primaryType: primary_type,
      message: { ...message, wallet: account.address, expiresAt }
    } as never)

    const started = Date.now()
    const held = service.request(`${path}?wait_for=change&version=${view.body.version}&timeout=20`)
    await new Promise((r) => setTimeout(r, 200))
    const attested = await payer("POST", `${path}/wallet`, {
      wallet: account.address.toUpperCase().replace("0X", "0x"),
      chain_id: 10143,
      expires_at: expiresAt,
      signature
    })
    expect(attested.status).toBe(200)
    const woken = await held
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(woken.status).toBe(200)
    expect(woken.headers.get("cache-control")).toBe("no-store")
    const body = (await woken.json()) as PayerView
    expect(body).toMatchObject({ status: "ready", address: attested.body.address, attestation: null })
    expect(body.version).not.toBe(view.body.version)
    expect(Object.keys(body).sort()).toEqual(PAYER_FIELDS)
  })

  it("rejects unknown fields and malformed values with 400 naming the field, and bad ids with 404", async () => {
    const made = await create({ payer_policy_mode: "merchant_session" })
    const path = `/v1/payer/deposit-requests/${made.body.id}`
    const extra = await payer("POST", `${path}/merchant-session`, { secret: "x", also: 1 })
    expect(extra.status).toBe(400)
    expect(extra.body.error.code).toBe("invalid_request")
    const shortCode = await payer("POST", `${path}/mailbox/verify`, { code: "12345" })
    expect(shortCode.status).toBe(400)
    expect(JSON.stringify(shortCode.body.error)).toContain("code")
    const badWallet = await payer("POST", `${path}/wallet`, {
      ...(await sign(made.body.id)).body,
      wallet: "0x12"
    })
    expect(badWallet.status).toBe(400)
    expect(JSON.stringify(badWallet.body.error)).toContain("wallet")
    for (const id of [randomUUID(), `cus_${randomUUID()}`, `dr_${randomUUID()}`]) {
      const res = await payer("POST", `/v1/payer/deposit-requests/${id}/merchant-session`, { secret: "x" })
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe("deposit_request_not_found")
    }
    // The mailbox routes on a merchant-session request: the proof is not owed there.
    expect((await payer("POST", `${path}/mailbox/start`)).status).toBe(409)
  })

  it("lets only the checkout origin write, while any origin may read", async () => {
    const made = await create()
    const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
    const preflight = (origin: string) =>
      service.request(path, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type"
        }
      })
    // The default checkout origin is the service's own (where the hosted checkout is served).
    const own = new URL(service.baseUrl).origin
    expect((await preflight(own)).headers.get("access-control-allow-origin")).toBe(own)
    expect(
      (await preflight("https://stranger.example")).headers.get("access-control-allow-origin")
    ).toBeNull()
    const read = await service.request(`/v1/payer/deposit-requests/${made.body.id}`, {
      headers: { origin: "https://stranger.example" }
    })
    expect(read.headers.get("access-control-allow-origin")).toBe("*")
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

/** The verification attempts (`va_`) recorded for a request, oldest first, as `kind:outcome`. */
const attemptsOf = async (on: RunningService, id: string) => {
  const db = new pg.Client({ connectionString: on.databaseUrl })
  await db.connect()
  try {
    const rows = await db.query<{ kind: string; outcome: string }>(
      "select kind, outcome from verification_attempts where deposit_request_id = $1 order by attempted_at, kind",
      [id.slice(3)]
    )
    return rows.rows.map((r) => `${r.kind}:${r.outcome}`)
  } finally {
    await db.end()
  }
}

describe("the mailbox policy, end to end over SMTP", () => {
  let inbox: ReadonlyArray<ReceivedMail> = []
  const clock = new ControlledClock()
  let smtp: Awaited<ReturnType<typeof startSmtpInbox>> | undefined
  let mailService: RunningService
  let mailApi: MerchantClient
  let mailRefs: { issuerId: string; payoutAddressId: string }

  beforeAll(async () => {
    // A relay that refuses a recipient: the service must answer 503, not crash.
    smtp = await startSmtpInbox((address) => address.startsWith("refused-"))
    inbox = smtp.inbox
    mailService = await startService({
      clock,
      config: { smtpUrl: Option.some(smtp.url), rateLimitCapacity: 10_000 }
    })
    mailApi = merchantClient(mailService, await createMerchant(mailService.databaseUrl))
    mailRefs = await mailApi.setup()
  })
  afterAll(async () => {
    await mailService?.stop()
    await smtp?.close()
  })

  const createMailbox = async (email: string) => {
    const made = await mailApi.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      {
        amount: "7.000000",
        issuer_id: mailRefs.issuerId,
        payout_address_id: mailRefs.payoutAddressId,
        payer_policy_mode: "mailbox",
        expected_email: email
      },
      { "idempotency-key": randomUUID() }
    )
    expect(made.status).toBe(201)
    return made.body.id
  }
  const codesTo = (email: string) =>
    inbox.filter((m) => m.to === email).map((m) => m.raw.match(/one-time code is (\d{6})/)?.[1] as string)
  const call = <T = PayerView>(method: string, path: string, body?: unknown) =>
    payerOn<T>(mailService, method, path, body)

  it("mails a code, refuses it once expired, accepts a fresh one once, then releases the address", async () => {
    const email = `payer-${randomUUID().slice(0, 8)}@example.com`
    const id = await createMailbox(email)
    const path = `/v1/payer/deposit-requests/${id}`
    const view = await call("GET", path)
    expect(view.body).toMatchObject({ proof_required: "mailbox", wallet_required: false })
    expect(JSON.stringify(view.body)).not.toContain(email)

    expect((await call("POST", `${path}/mailbox/start`)).status).toBe(202)
    const [first] = codesTo(email)
    expect(first).toMatch(/^\d{6}$/)
    const db = new pg.Client({ connectionString: mailService.databaseUrl })
    await db.connect()
    const stored = await db.query<{ digest: string }>(
      "select encode(code_digest, 'hex') as digest from mailbox_codes where deposit_request_id = $1",
      [id.slice(3)]
    )
    await db.end()
    expect(stored.rows).toHaveLength(1)
    expect(stored.rows[0]?.digest).toMatch(/^[0-9a-f]{64}$/)
    expect(stored.rows[0]?.digest).not.toContain(first)

    clock.advance(10 * 60 * 1000 + 1000)
    const expired = await call("POST", `${path}/mailbox/verify`, { code: first })
    expect(expired.status).toBe(400)
    expect(expired.body.error).toMatchObject({ code: "invalid_request", param: "code" })

    expect((await call("POST", `${path}/mailbox/start`)).status).toBe(202)
    const second = codesTo(email)[1] as string
    const ok = await call("POST", `${path}/mailbox/verify`, { code: second })
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ proof_required: null, wallet_required: true })
    expect((await call("POST", `${path}/mailbox/verify`, { code: second })).status).toBe(409)

    const account = privateKeyToAccount(generatePrivateKey())
    const expiresAt = Math.floor(clock.unsafeCurrentTimeMillis() / 1000) + 600
    const signature = await account.signTypedData(
      typedData({ depositRequest: id, wallet: account.address, chainId: 10143, expiresAt })
    )
    const ready = await call("POST", `${path}/wallet`, {
      wallet: account.address.toLowerCase(),
      chain_id: 10143,
      expires_at: expiresAt,
      signature
    })
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: "ready", proof_required: null })
    expect(ready.body.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const events = await mailApi.call<{ events: Array<{ type: string }> }>(
      "GET",
      `/v1/events?deposit_request_id=${id}`
    )
    expect(events.body.events.map((e) => e.type).sort()).toEqual([
      "deposit_request.ready",
      "verification.approved"
    ])
    expect(await attemptsOf(mailService, id)).toEqual([
      "mailbox_send:accepted",
      "mailbox_code:refused",
      "mailbox_send:accepted",
      "mailbox_code:accepted",
      "wallet:accepted"
    ])
  })

  it("answers 503 when the relay refuses the message", async () => {
    const id = await createMailbox(`refused-${randomUUID().slice(0, 8)}@example.com`)
    const res = await call("POST", `/v1/payer/deposit-requests/${id}/mailbox/start`)
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe("service_unavailable")
  })

  it("answers 429 after five wrong codes, even to the right one", async () => {
    const email = `guess-${randomUUID().slice(0, 8)}@example.com`
    const id = await createMailbox(email)
    const path = `/v1/payer/deposit-requests/${id}/mailbox`
    expect((await call("POST", `${path}/start`)).status).toBe(202)
    const code = codesTo(email)[0] as string
    const wrong = code === "000000" ? "111111" : "000000"
    for (let i = 0; i < 5; i++) {
      const res = await call("POST", `${path}/verify`, { code: wrong })
      expect(res.status).toBe(400)
    }
    const limited = await call("POST", `${path}/verify`, { code })
    expect(limited.status).toBe(429)
    expect(limited.body.error.code).toBe("rate_limited")
  })
})

describe("smart-contract wallets over HTTP (ERC-1271 through CHAIN_RPC_URL)", () => {
  let node: AnvilHandle
  let chainService: RunningService
  let chainApi: MerchantClient
  let chainRefs: { issuerId: string; payoutAddressId: string }

  beforeAll(async () => {
    node = await startAnvil()
    chainService = await startService({
      config: { chainRpcUrl: Option.some(node.rpcUrl), rateLimitCapacity: 10_000 }
    })
    chainApi = merchantClient(chainService, await createMerchant(chainService.databaseUrl))
    chainRefs = await chainApi.setup()
  })
  afterAll(async () => {
    await chainService?.stop()
    await node?.stop()
  })

  it("binds a contract wallet whose owner signed the statement, and refuses one its owner did not sign", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const wallet = await deployContractWallet(node, owner)
    const made = await chainApi.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: chainRefs.issuerId, payout_address_id: chainRefs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
    const expiresAt = Math.floor(Date.now() / 1000) + 600
    const hash = hashTypedData(typedData({ depositRequest: made.body.id, wallet, chainId: 10143, expiresAt }))
    const body = { wallet: wallet.toLowerCase(), chain_id: 10143, expires_at: expiresAt }
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await payerOn(chainService, "POST", path, {
      ...body,
      signature: await stranger.sign({ hash })
    })
    expect(forged.status).toBe(400)
    expect(forged.body.error.param).toBe("signature")
    const bound = await payerOn(chainService, "POST", path, {
      ...body,
      signature: await owner.sign({ hash })
    })
    expect(bound.status).toBe(200)
    expect(bound.body.status).toBe("ready")
    const merchantView = await chainApi.call<{ payer_wallet: string }>(
      "GET",
      `/v1/deposit-requests/${made.body.id}`
    )
    expect(merchantView.body.payer_wallet).toBe(wallet)
  })
})
