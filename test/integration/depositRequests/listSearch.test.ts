import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import type { MerchantClient } from "../../support/Api"
import type { ChainService } from "../../support/ChainService"
import { localReceiverNetwork, makeCertificates, type startReceiver } from "../../support/HttpsReceiver"
import type { LocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import { scopedChainService, scopedLocalChain } from "../../support/scopedChainService"
import { newMerchantClient, scopedReceiver } from "../../support/scopedResources"

const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

class Fixture extends Context.Tag("test/ListSearchFixture")<
  Fixture,
  ChainService & { readonly local: LocalChain; readonly receiver: Awaited<ReturnType<typeof startReceiver>> }
>() {}

// A webhook receiver (for `whd_` ids), then a chain with blocks every 0.2 s and the service on it.
const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const receiver = yield* scopedReceiver(tls, () => 200)
    const local = yield* scopedLocalChain({ blockTime: 0.2 })
    const running = yield* scopedChainService(local, {
      service: { webhookNetwork: localReceiverNetwork(HOST, tls.ca) },
      config: { webhookFirstRetryMs: 200 }
    })
    return { ...running, local, receiver }
  })
)

/** The paying payer: a funded dev account, so it pays gas for its own transfer. */
const payer = anvilDevAccount(3)

interface Page {
  readonly deposit_requests: ReadonlyArray<{ readonly id: string }>
  readonly next_cursor: string | null
}
interface Refusal {
  readonly error: { readonly code: string; readonly param?: string; readonly message: string }
}

const call = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))

/** The ids `q` finds (one page of up to 100), newest first. */
const search = (api: MerchantClient, q: string, more = "") =>
  Effect.gen(function* () {
    const page = yield* call<Page>(
      api,
      "GET",
      `/v1/deposit-requests?limit=100&q=${encodeURIComponent(q)}${more}`
    )
    assert.strictEqual(page.status, 200, `${q}: ${JSON.stringify(page.body)}`)
    assert.isNull(page.body.next_cursor)
    return page.body.deposit_requests.map((r) => r.id)
  })

const waitFor = <T>(read: Effect.Effect<T>, until: (value: T) => boolean, ms = 40_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + ms
    let last = yield* read
    while (!until(last) && Date.now() < deadline) {
      yield* Effect.sleep("200 millis")
      last = yield* read
    }
    assert.isTrue(until(last), `gave up waiting: ${JSON.stringify(last)}`)
    return last
  })

const randomAddress = () => privateKeyToAccount(generatePrivateKey()).address

layer(FixtureLive, { timeout: 120_000, excludeTestServices: true })("the list's one search, q", (it) => {
  it.effect("finds a request by each identifier it carries, and never another account's", () =>
    Effect.gen(function* () {
      const { api, service, local, receiver, db } = yield* Fixture
      const other = yield* newMerchantClient(service)
      const endpoint = yield* call<{ id: string }>(api, "POST", "/v1/webhooks", {
        url: `https://${HOST}:${receiver.port}/hooks`
      })
      assert.strictEqual(endpoint.status, 201, JSON.stringify(endpoint.body))

      // A request with a customer, an expected email and a reference; another account with the same ones.
      const tag = randomUUID().slice(0, 8)
      const reference = `order-${tag}`
      const customerEmail = `Ada.${tag}@Example.com`
      const expectedEmail = `payer.${tag}@example.org`
      const described = yield* Effect.forEach([api, other], (client) =>
        Effect.gen(function* () {
          const refs = yield* Effect.promise(() => client.setup())
          const customer = yield* call<{ id: string }>(client, "POST", "/v1/customers", {
            name: "Ada",
            email: customerEmail
          })
          assert.strictEqual(customer.status, 201, JSON.stringify(customer.body))
          const made = yield* call<{ id: string }>(
            client,
            "POST",
            "/v1/deposit-requests",
            {
              amount: "1.000000",
              issuer_id: refs.issuerId,
              payout_address_id: refs.payoutAddressId,
              customer_id: customer.body.id,
              payer_policy_mode: "mailbox",
              expected_email: expectedEmail,
              reference
            },
            { "idempotency-key": randomUUID() }
          )
          assert.strictEqual(made.status, 201, JSON.stringify(made.body))
          return { id: made.body.id, customer: customer.body.id }
        })
      )
      const [mine, theirs] = described as [(typeof described)[0], (typeof described)[0]]
      // A request of the same reference with another case, and one with nothing: neither is found.
      yield* call(
        api,
        "POST",
        "/v1/deposit-requests",
        {
          amount: "1.000000",
          ...(yield* Effect.promise(() => api.setup()).pipe(
            Effect.map((r) => ({ issuer_id: r.issuerId, payout_address_id: r.payoutAddressId }))
          )),
          reference: reference.toUpperCase()
        },
        { "idempotency-key": randomUUID() }
      )

      // A paid request to a payout address of its own: pay 3 for 2, so a payment in, a settlement, a return.
      const payoutAddress = randomAddress()
      const paid = yield* Effect.promise(() =>
        readyRequest({ service, api, payer }, "2.000000", payoutAddress)
      )
      const decoy = yield* Effect.promise(() =>
        readyRequest({ service, api, payer: privateKeyToAccount(generatePrivateKey()) }, "1.000000")
      )
      yield* Effect.promise(() => local.mint(payer.address, 10_000_000n))
      yield* Effect.promise(() => local.pay(payer, paid.address, 3_000_000n))
      const transfers = yield* waitFor(
        Effect.map(
          call<{ transfers: ReadonlyArray<{ kind: string; transaction_hash: string }> }>(
            api,
            "GET",
            `/v1/deposit-requests/${paid.id}/transfers`
          ),
          (r) => r.body.transfers
        ),
        (ts) => ts.some((t) => t.kind === "settlement") && ts.some((t) => t.kind === "return")
      )
      const request = (yield* call<{ issuer_id: string; payout_address_id: string; payer_wallet: string }>(
        api,
        "GET",
        `/v1/deposit-requests/${paid.id}`
      )).body
      const attempts = (yield* call<{ verification_attempts: ReadonlyArray<{ id: string }> }>(
        api,
        "GET",
        `/v1/deposit-requests/${paid.id}/verification-attempts`
      )).body.verification_attempts
      const events = (yield* call<{ events: ReadonlyArray<{ id: string }> }>(
        api,
        "GET",
        `/v1/events?deposit_request_id=${paid.id}`
      )).body.events
      const deliveries = yield* waitFor(
        Effect.map(
          call<{ deliveries: ReadonlyArray<{ id: string }> }>(
            api,
            "GET",
            `/v1/deposit-requests/${paid.id}/deliveries`
          ),
          (r) => r.body.deliveries
        ),
        (ds) => ds.length > 0
      )
      // An attachment on the paid request (its upload is not what is searched, so it is written directly).
      const attachment = randomUUID()
      yield* Effect.promise(() =>
        db.query(
          `insert into attachments (id, account_id, file_name, size_bytes, status, upload_expires_at, created_at, updated_at)
             select $1, account_id, 'invoice.pdf', 100, 'uploaded', now(), now(), now() from deposit_requests where id = $2`,
          [attachment, paid.id.slice(3)]
        )
      )
      yield* Effect.promise(() =>
        db.query(
          `insert into deposit_request_attachments (deposit_request_id, attachment_id, position) values ($1, $2, 0)`,
          [paid.id.slice(3), attachment]
        )
      )
      assert.isAbove(attempts.length, 0)
      assert.isAbove(events.length, 0)

      const finds: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
        ["request id", paid.id, [paid.id]],
        ["request id, upper case", paid.id.toUpperCase(), [paid.id]],
        ["customer id", mine.customer, [mine.id]],
        ["issuer id", request.issuer_id, [paid.id]],
        ["payout address id", request.payout_address_id, [paid.id]],
        ["attachment id", `att_${attachment}`, [paid.id]],
        ["verification attempt id", attempts[0]!.id, [paid.id]],
        ["event id", events[0]!.id, [paid.id]],
        ["webhook delivery id", deliveries[0]!.id, [paid.id]],
        ["reference", reference, [mine.id]],
        ["customer email, any case", customerEmail.toLowerCase(), [mine.id]],
        ["expected email, any case", expectedEmail.toUpperCase(), [mine.id]],
        ["deposit address", paid.address, [paid.id]],
        ["deposit address, lower case", paid.address.toLowerCase(), [paid.id]],
        ["payer wallet", payer.address.toLowerCase(), [paid.id]],
        ["payout address", payoutAddress, [paid.id]],
        ["decoy's deposit address", decoy.address, [decoy.id]],
        ...transfers.map((t) => [`${t.kind} transaction hash`, t.transaction_hash, [paid.id]] as const),
        ["unknown reference", `order-${randomUUID()}`, []],
        ["unknown hash", `0x${"ab".repeat(32)}`, []],
        ["another account's request id", theirs.id, []],
        ["another account's customer id", theirs.customer, []]
      ]
      for (const [kind, q, expected] of finds) {
        assert.deepStrictEqual(yield* search(api, q), expected, kind)
      }
      // The other account finds only its own, by the same reference and email.
      assert.deepStrictEqual(yield* search(other, reference), [theirs.id])
      assert.deepStrictEqual(yield* search(other, customerEmail), [theirs.id])
      assert.deepStrictEqual(yield* search(other, paid.id), [])
      assert.deepStrictEqual(yield* search(other, payer.address), [])
      // Combined with the other filters by `and`.
      assert.deepStrictEqual(yield* search(api, payer.address, "&status=ready"), [])
      assert.deepStrictEqual(yield* search(api, reference, "&status=awaiting_payer"), [mine.id])
    })
  )

  it.effect("refuses what names no request, and a mistyped address, with 400 invalid_request on q", () =>
    Effect.gen(function* () {
      const { api } = yield* Fixture
      const cases = [
        `wh_${randomUUID()}`,
        `acct_${randomUUID()}`,
        `rec_${randomUUID()}`,
        // One letter's case off the EIP-55 checksum.
        "0x52908400098527886E0F7030069857D2E4169Ee7",
        "",
        "r".repeat(201),
        "line\u0007bell"
      ]
      for (const q of cases) {
        const refused = yield* call<Refusal>(api, "GET", `/v1/deposit-requests?q=${encodeURIComponent(q)}`)
        assert.strictEqual(refused.status, 400, q)
        assert.strictEqual(refused.body.error.code, "invalid_request", q)
        assert.strictEqual(refused.body.error.param, "q", q)
      }
    })
  )
})
