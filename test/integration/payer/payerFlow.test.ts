import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option } from "effect"
import pg from "pg"
import { hashTypedData } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { type AnvilHandle, startAnvil } from "../../../infra/chain/Anvil"
import { typedData } from "../../../services/payer/WalletAttestation"
import { deployContractWallet } from "../../support/ContractWallet"
import { ControlledClock } from "../../support/ControlledClock"
import { Inbox, mailingSandboxLayer } from "../../support/MailingSandbox"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { Sandbox, sandboxCall, sandboxLayer, sandboxPayerCall } from "../../support/Sandbox"

type PayerView = Record<string, unknown> & {
  id: string
  status: string
  address: string | null
  version: string
}
type ErrorBody = { error: { code: string; param?: string } }

const call = sandboxCall

/** A deposit request of the suite's merchant, with its references. */
const createWith = <T = { id: string }>(body: Record<string, unknown>) =>
  Effect.flatMap(MerchantReferences, (refs) =>
    call<T>(
      "POST",
      "/v1/deposit-requests",
      { issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...body },
      { "idempotency-key": randomUUID() }
    )
  )

const create = (extra: Record<string, unknown> = {}) =>
  createWith<{ id: string; merchant_session_secret?: string }>({
    amount: "12.500000",
    heading: "Order 42",
    reference: "private-ref",
    metadata: { secret: "x" },
    ...extra
  })

/** A raw request to the suite's service. */
const request = (path: string, init?: RequestInit) =>
  Effect.flatMap(Sandbox, ({ service }) => Effect.promise(() => service.request(path, init)))

/** A payer's call (no credentials) to the suite's service. */
const payer = <T = PayerView>(method: string, path: string, body?: unknown) =>
  sandboxPayerCall<T & ErrorBody>(method, path, body)

const sign = (requestId: string, opts: { chainId?: number; expiresAt?: number; forRequest?: string } = {}) =>
  Effect.promise(async () => {
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
  })

/** The verification attempts (`va_`) recorded for a request, oldest first, as `kind:outcome`. */
const attemptsOf = (id: string) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async () => {
      const db = new pg.Client({ connectionString: service.databaseUrl })
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
    })
  )

/** The types of the events of a request, as the merchant lists them. */
const eventTypes = (id: string) =>
  Effect.map(
    call<{ events: Array<{ type: string }> }>("GET", `/v1/events?deposit_request_id=${id}`),
    (events) => events.body.events.map((e) => e.type)
  )

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
  "issuer_support_email",
  "issuer_support_url",
  "payer_policy_mode",
  "payment_link",
  "proof_required",
  "receipt",
  "received",
  "received_base_units",
  "return_url",
  "returns",
  "status",
  "token_address",
  "version",
  "wallet_required"
]

const PayerFlowLive = sandboxWithReferences(
  sandboxLayer(() => ({
    config: {
      rateLimitCapacity: 10_000,
      tokenAddress: Option.some("0x1c7d4b196cb0c7b01d743fbc6116a902379c7238")
    }
  }))
)

// The live clock: the long poll's test waits real time before the attestation that wakes it.
layer(PayerFlowLive, { timeout: 120_000, excludeTestServices: true })("the payer flow", (it) => {
  it.effect(
    "shows a payer only what is safe, then releases a one-time address on a valid wallet statement",
    () =>
      Effect.gen(function* () {
        const made = yield* create()
        const view = yield* payer("GET", `/v1/payer/deposit-requests/${made.body.id}`)
        assert.strictEqual(view.status, 200)
        assert.deepStrictEqual(Object.keys(view.body).sort(), PAYER_FIELDS)
        assert.notInclude(JSON.stringify(view.body), "private-ref")
        assert.deepInclude(view.body, {
          status: "awaiting_payer",
          amount: "12.500000",
          heading: "Order 42",
          issuer_display_name: "Acme Books",
          wallet_required: true,
          address: null,
          return_url: null
        })
        for (const key of ["metadata", "reference", "expected_email", "payer_reference", "payout_address_id"])
          assert.notProperty(view.body, key)
        const { account, body } = yield* sign(made.body.id)
        const attested = yield* payer("POST", `/v1/payer/deposit-requests/${made.body.id}/wallet`, body)
        assert.strictEqual(attested.status, 200)
        assert.strictEqual(attested.body.status, "ready")
        assert.match(attested.body.address as string, /^0x[0-9a-fA-F]{40}$/)
        assert.strictEqual(
          attested.body.payment_link,
          `ethereum:0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238@10143/transfer?address=${attested.body.address}&uint256=12500000`
        )
        const merchantView = yield* call<{ payer_wallet: string; address: string; status: string }>(
          "GET",
          `/v1/deposit-requests/${made.body.id}`
        )
        assert.deepInclude(merchantView.body, {
          status: "ready",
          payer_wallet: account.address,
          address: attested.body.address as string
        })
        // The same signed statement again, on this or any request, is refused.
        const replay = yield* payer("POST", `/v1/payer/deposit-requests/${made.body.id}/wallet`, body)
        assert.strictEqual(replay.status, 409)
        assert.deepStrictEqual(yield* eventTypes(made.body.id), ["deposit_request.ready"])
      })
  )

  it.effect("carries the merchant's return_url to the payer read", () =>
    Effect.gen(function* () {
      const made = yield* create({ return_url: "https://shop.example.com/orders/42?back=1" })
      const view = yield* payer("GET", `/v1/payer/deposit-requests/${made.body.id}`)
      assert.strictEqual(view.status, 200)
      assert.strictEqual(view.body.return_url, "https://shop.example.com/orders/42?back=1")
    })
  )

  it.effect("refuses statements for another request, chain or wallet, expired ones and bad signatures", () =>
    Effect.gen(function* () {
      const made = yield* create()
      const other = yield* create()
      const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
      const forOther = yield* sign(made.body.id, { forRequest: other.body.id })
      // The service rebuilds the statement from the URL, so one signed for another request cannot verify here.
      assert.strictEqual((yield* payer("POST", path, forOther.body)).body.error.param, "signature")
      const wrongChain = yield* sign(made.body.id, { chainId: 143 })
      assert.strictEqual((yield* payer("POST", path, wrongChain.body)).body.error.param, "chain_id")
      const expired = yield* sign(made.body.id, { expiresAt: Math.floor(Date.now() / 1000) - 5 })
      assert.strictEqual((yield* payer("POST", path, expired.body)).body.error.param, "expires_at")
      const stolen = yield* sign(made.body.id)
      const impostor = privateKeyToAccount(generatePrivateKey())
      const res = yield* payer("POST", path, { ...stolen.body, wallet: impostor.address })
      assert.strictEqual(res.status, 400)
      assert.strictEqual(res.body.error.param, "signature")
      const garbled = yield* payer("POST", path, { ...(yield* sign(made.body.id)).body, signature: "0x1234" })
      assert.strictEqual(garbled.body.error.param, "signature")
      // five refusals recorded as attempts: even a valid statement is now rate limited
      const limited = yield* payer("POST", path, (yield* sign(made.body.id)).body)
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.body.error.code, "rate_limited")
      assert.strictEqual(
        (yield* payer("GET", `/v1/payer/deposit-requests/${made.body.id}`)).body.status,
        "awaiting_payer"
      )
    })
  )

  it.effect("needs the merchant-session secret before the wallet, refusing a wrong one", () =>
    Effect.gen(function* () {
      const made = yield* create({ payer_policy_mode: "merchant_session", payer_reference: "user-7" })
      const path = `/v1/payer/deposit-requests/${made.body.id}`
      const before = yield* payer("GET", path)
      assert.deepInclude(before.body, {
        proof_required: "merchant_session",
        wallet_required: false,
        attestation: null
      })
      assert.deepStrictEqual(Object.keys(before.body).sort(), PAYER_FIELDS)
      assert.notInclude(JSON.stringify(before.body), "user-7")
      const early = yield* payer("POST", `${path}/wallet`, (yield* sign(made.body.id)).body)
      assert.strictEqual(early.status, 409)
      assert.strictEqual(early.body.error.code, "invalid_state")
      const wrong = yield* payer("POST", `${path}/merchant-session`, { secret: "mss_wrong" })
      assert.strictEqual(wrong.status, 400)
      assert.strictEqual(wrong.body.error.param, "secret")
      const ok = yield* payer("POST", `${path}/merchant-session`, {
        secret: made.body.merchant_session_secret
      })
      assert.strictEqual(ok.status, 200)
      assert.deepInclude(ok.body, { proof_required: null, wallet_required: true })
      const again = yield* payer("POST", `${path}/merchant-session`, {
        secret: made.body.merchant_session_secret
      })
      assert.strictEqual(again.status, 409)
      const ready = yield* payer("POST", `${path}/wallet`, (yield* sign(made.body.id)).body)
      assert.strictEqual(ready.body.status, "ready")
      assert.deepStrictEqual((yield* eventTypes(made.body.id)).sort(), [
        "deposit_request.ready",
        "verification.approved"
      ])
      assert.deepStrictEqual(yield* attemptsOf(made.body.id), [
        "merchant_session:refused",
        "merchant_session:accepted",
        "wallet:accepted"
      ])
    })
  )

  it.effect(
    "hands a wallet the typed data to sign, and answers a held long poll when the address is released",
    () =>
      Effect.gen(function* () {
        const made = yield* create()
        const path = `/v1/payer/deposit-requests/${made.body.id}`
        const view = yield* payer<PayerView & { attestation: unknown }>("GET", path)
        const { domain, types, primary_type, message } = view.body.attestation as {
          domain: { name: string; version: string; chainId: number }
          types: Record<string, Array<{ name: string; type: string }>>
          primary_type: string
          message: { depositRequest: string; chainId: number }
        }
        assert.deepStrictEqual(message, { depositRequest: made.body.id, chainId: 10143 })
        const account = privateKeyToAccount(generatePrivateKey())
        const expiresAt = Math.floor(Date.now() / 1000) + 300
        // Exactly what a browser hands to eth_signTypedData_v4: the served template plus wallet and deadline.
        const signature = yield* Effect.promise(() =>
          account.signTypedData({
            domain,
            types,
            primaryType: primary_type,
            message: { ...message, wallet: account.address, expiresAt }
          } as never)
        )

        const started = Date.now()
        const held = yield* Effect.fork(
          request(`${path}?wait_for=change&version=${view.body.version}&timeout=20`)
        )
        yield* Effect.sleep("200 millis")
        const attested = yield* payer("POST", `${path}/wallet`, {
          wallet: account.address.toUpperCase().replace("0X", "0x"),
          chain_id: 10143,
          expires_at: expiresAt,
          signature
        })
        assert.strictEqual(attested.status, 200)
        const woken = yield* Fiber.join(held)
        assert.isBelow(Date.now() - started, 5_000)
        assert.strictEqual(woken.status, 200)
        assert.strictEqual(woken.headers.get("cache-control"), "no-store")
        const body = (yield* Effect.promise(() => woken.json())) as PayerView
        assert.deepInclude(body, { status: "ready", address: attested.body.address, attestation: null })
        assert.notStrictEqual(body.version, view.body.version)
        assert.deepStrictEqual(Object.keys(body).sort(), PAYER_FIELDS)
      })
  )

  it.effect(
    "rejects unknown fields and malformed values with 400 naming the field, and bad ids with 404",
    () =>
      Effect.gen(function* () {
        const made = yield* create({ payer_policy_mode: "merchant_session" })
        const path = `/v1/payer/deposit-requests/${made.body.id}`
        const extra = yield* payer("POST", `${path}/merchant-session`, { secret: "x", also: 1 })
        assert.strictEqual(extra.status, 400)
        assert.strictEqual(extra.body.error.code, "invalid_request")
        const shortCode = yield* payer("POST", `${path}/mailbox/verify`, { code: "12345" })
        assert.strictEqual(shortCode.status, 400)
        assert.include(JSON.stringify(shortCode.body.error), "code")
        const badWallet = yield* payer("POST", `${path}/wallet`, {
          ...(yield* sign(made.body.id)).body,
          wallet: "0x12"
        })
        assert.strictEqual(badWallet.status, 400)
        assert.include(JSON.stringify(badWallet.body.error), "wallet")
        for (const id of [randomUUID(), `cus_${randomUUID()}`, `dr_${randomUUID()}`]) {
          const res = yield* payer("POST", `/v1/payer/deposit-requests/${id}/merchant-session`, {
            secret: "x"
          })
          assert.strictEqual(res.status, 404)
          assert.strictEqual(res.body.error.code, "deposit_request_not_found")
        }
        // The mailbox routes on a merchant-session request: the proof is not owed there.
        assert.strictEqual((yield* payer("POST", `${path}/mailbox/start`)).status, 409)
      })
  )

  it.effect("lets only the checkout origin write, while any origin may read", () =>
    Effect.gen(function* () {
      const { service } = yield* Sandbox
      const made = yield* create()
      const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
      const preflight = (origin: string) =>
        request(path, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type"
          }
        })
      // The default checkout origin is the service's own (where the hosted checkout is served).
      const own = new URL(service.baseUrl).origin
      assert.strictEqual((yield* preflight(own)).headers.get("access-control-allow-origin"), own)
      assert.isNull((yield* preflight("https://stranger.example")).headers.get("access-control-allow-origin"))
      const read = yield* request(`/v1/payer/deposit-requests/${made.body.id}`, {
        headers: { origin: "https://stranger.example" }
      })
      assert.strictEqual(read.headers.get("access-control-allow-origin"), "*")
    })
  )

  it.effect(
    "gives concurrent attestations on different requests distinct addresses, and one request one address",
    () =>
      Effect.gen(function* () {
        const attest = (id: string) =>
          Effect.flatMap(sign(id), ({ body }) =>
            payer("POST", `/v1/payer/deposit-requests/${id}/wallet`, body)
          )
        const made = yield* Effect.all(
          Array.from({ length: 6 }, () => create()),
          { concurrency: "unbounded" }
        )
        const results = yield* Effect.all(
          made.map((m) => attest(m.body.id)),
          { concurrency: "unbounded" }
        )
        const addresses = results.map((r) => r.body.address)
        assert.isTrue(results.every((r) => r.status === 200))
        assert.strictEqual(new Set(addresses).size, 6)
        const one = yield* create()
        const racing = yield* Effect.all(
          [0, 1, 2].map(() => attest(one.body.id)),
          { concurrency: "unbounded" }
        )
        assert.lengthOf(
          racing.filter((r) => r.status === 200),
          1
        )
        assert.lengthOf(
          racing.filter((r) => r.status === 409),
          2
        )
      })
  )

  it.effect("answers unknown and malformed ids with 404 and allows any origin on reads", () =>
    Effect.gen(function* () {
      const res = yield* request(`/v1/payer/deposit-requests/dr_${randomUUID()}`, {
        headers: { origin: "https://anyone.example" }
      })
      assert.strictEqual(res.status, 404)
      assert.strictEqual(res.headers.get("access-control-allow-origin"), "*")
      assert.strictEqual((yield* request("/v1/payer/deposit-requests/nope")).status, 404)
    })
  )
})

/** The service's wall clock, moved by the test past a code's lifetime. */
const mailClock = new ControlledClock()

// A relay that refuses a recipient: the service must answer 503, not crash.
const MailboxLive = sandboxWithReferences(
  mailingSandboxLayer({
    clock: mailClock,
    config: { rateLimitCapacity: 10_000 },
    refuse: (address) => address.startsWith("refused-")
  })
)

/** A mailbox-policy request for `email`, created. */
const createMailbox = (email: string) =>
  Effect.gen(function* () {
    const made = yield* createWith<{ id: string }>({
      amount: "7.000000",
      payer_policy_mode: "mailbox",
      expected_email: email
    })
    assert.strictEqual(made.status, 201)
    return made.body.id
  })

/** The codes mailed to `email`, oldest first. */
const codesTo = (email: string) =>
  Effect.map(Inbox, (inbox) =>
    inbox.filter((m) => m.to === email).map((m) => m.raw.match(/one-time code is (\d{6})/)?.[1] as string)
  )

layer(MailboxLive, { timeout: 120_000 })("the mailbox policy, end to end over SMTP", (it) => {
  it.effect(
    "mails a code, refuses it once expired, accepts a fresh one once, then releases the address",
    () =>
      Effect.gen(function* () {
        const { service } = yield* Sandbox
        const email = `payer-${randomUUID().slice(0, 8)}@example.com`
        const id = yield* createMailbox(email)
        const path = `/v1/payer/deposit-requests/${id}`
        const view = yield* payer("GET", path)
        assert.deepInclude(view.body, { proof_required: "mailbox", wallet_required: false })
        assert.notInclude(JSON.stringify(view.body), email)

        assert.strictEqual((yield* payer("POST", `${path}/mailbox/start`)).status, 202)
        const [first] = yield* codesTo(email)
        assert.match(first as string, /^\d{6}$/)
        const stored = yield* Effect.promise(async () => {
          const db = new pg.Client({ connectionString: service.databaseUrl })
          await db.connect()
          try {
            return await db.query<{ digest: string }>(
              "select encode(code_digest, 'hex') as digest from mailbox_codes where deposit_request_id = $1",
              [id.slice(3)]
            )
          } finally {
            await db.end()
          }
        })
        assert.lengthOf(stored.rows, 1)
        assert.match(stored.rows[0]?.digest as string, /^[0-9a-f]{64}$/)
        assert.notInclude(stored.rows[0]?.digest as string, first as string)

        mailClock.advance(10 * 60 * 1000 + 1000)
        const expired = yield* payer("POST", `${path}/mailbox/verify`, { code: first })
        assert.strictEqual(expired.status, 400)
        assert.deepInclude(expired.body.error, { code: "invalid_request", param: "code" })

        assert.strictEqual((yield* payer("POST", `${path}/mailbox/start`)).status, 202)
        const second = (yield* codesTo(email))[1] as string
        const ok = yield* payer("POST", `${path}/mailbox/verify`, { code: second })
        assert.strictEqual(ok.status, 200)
        assert.deepInclude(ok.body, { proof_required: null, wallet_required: true })
        assert.strictEqual((yield* payer("POST", `${path}/mailbox/verify`, { code: second })).status, 409)

        const account = privateKeyToAccount(generatePrivateKey())
        const expiresAt = Math.floor(mailClock.unsafeCurrentTimeMillis() / 1000) + 600
        const signature = yield* Effect.promise(() =>
          account.signTypedData(
            typedData({ depositRequest: id, wallet: account.address, chainId: 10143, expiresAt })
          )
        )
        const ready = yield* payer("POST", `${path}/wallet`, {
          wallet: account.address.toLowerCase(),
          chain_id: 10143,
          expires_at: expiresAt,
          signature
        })
        assert.strictEqual(ready.status, 200)
        assert.deepInclude(ready.body, { status: "ready", proof_required: null })
        assert.match(ready.body.address as string, /^0x[0-9a-fA-F]{40}$/)
        assert.deepStrictEqual((yield* eventTypes(id)).sort(), [
          "deposit_request.ready",
          "verification.approved"
        ])
        assert.deepStrictEqual(yield* attemptsOf(id), [
          "mailbox_send:accepted",
          "mailbox_code:refused",
          "mailbox_send:accepted",
          "mailbox_code:accepted",
          "wallet:accepted"
        ])
      })
  )

  it.effect("answers 503 when the relay refuses the message", () =>
    Effect.gen(function* () {
      const id = yield* createMailbox(`refused-${randomUUID().slice(0, 8)}@example.com`)
      const res = yield* payer("POST", `/v1/payer/deposit-requests/${id}/mailbox/start`)
      assert.strictEqual(res.status, 503)
      assert.strictEqual(res.body.error.code, "service_unavailable")
    })
  )

  it.effect("answers 429 after five wrong codes, even to the right one", () =>
    Effect.gen(function* () {
      const email = `guess-${randomUUID().slice(0, 8)}@example.com`
      const id = yield* createMailbox(email)
      const path = `/v1/payer/deposit-requests/${id}/mailbox`
      assert.strictEqual((yield* payer("POST", `${path}/start`)).status, 202)
      const code = (yield* codesTo(email))[0] as string
      const wrong = code === "000000" ? "111111" : "000000"
      for (let i = 0; i < 5; i++) {
        const res = yield* payer("POST", `${path}/verify`, { code: wrong })
        assert.strictEqual(res.status, 400)
      }
      const limited = yield* payer("POST", `${path}/verify`, { code })
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.body.error.code, "rate_limited")
    })
  )
})

/** The local chain node the service reads ERC-1271 signatures from. */
class Node extends Context.Tag("test/Node")<Node, AnvilHandle>() {}

/** A local node (stopped after the service), and the service reading the chain through it. */
const ChainLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const node = yield* Effect.acquireRelease(
      Effect.promise(() => startAnvil()),
      (node) => Effect.promise(() => node.stop())
    )
    return Layer.merge(
      Layer.succeed(Node, node),
      sandboxWithReferences(
        sandboxLayer(() => ({ config: { chainRpcUrl: Option.some(node.rpcUrl), rateLimitCapacity: 10_000 } }))
      )
    )
  })
)

layer(ChainLive, { timeout: 120_000 })(
  "smart-contract wallets over HTTP (ERC-1271 through CHAIN_RPC_URL)",
  (it) => {
    it.effect(
      "binds a contract wallet whose owner signed the statement, and refuses one its owner did not sign",
      () =>
        Effect.gen(function* () {
          const node = yield* Node
          const owner = privateKeyToAccount(generatePrivateKey())
          const wallet = yield* Effect.promise(() => deployContractWallet(node, owner))
          const made = yield* createWith<{ id: string }>({ amount: "1.000000" })
          const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
          const expiresAt = Math.floor(Date.now() / 1000) + 600
          const hash = hashTypedData(
            typedData({ depositRequest: made.body.id, wallet, chainId: 10143, expiresAt })
          )
          const body = { wallet: wallet.toLowerCase(), chain_id: 10143, expires_at: expiresAt }
          const stranger = privateKeyToAccount(generatePrivateKey())
          const forged = yield* payer("POST", path, {
            ...body,
            signature: yield* Effect.promise(() => stranger.sign({ hash }))
          })
          assert.strictEqual(forged.status, 400)
          assert.strictEqual(forged.body.error.param, "signature")
          const bound = yield* payer("POST", path, {
            ...body,
            signature: yield* Effect.promise(() => owner.sign({ hash }))
          })
          assert.strictEqual(bound.status, 200)
          assert.strictEqual(bound.body.status, "ready")
          const merchantView = yield* call<{ payer_wallet: string }>(
            "GET",
            `/v1/deposit-requests/${made.body.id}`
          )
          assert.strictEqual(merchantView.body.payer_wallet, wallet)
        })
    )
  }
)
