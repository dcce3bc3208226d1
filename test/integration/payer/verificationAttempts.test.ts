import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { typedData } from "../../../services/payer/WalletAttestation"
import { merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import { Sandbox, sandboxLayer } from "../../support/Sandbox"

// A merchant reads the payer's proof attempts on a request: kind, outcome, reason, time and the attested wallet,
// newest first and cursored; never a secret, a code or a digest; another account's request is not found.

/** A second account, to look at the first one's request. */
const stranger = Effect.flatMap(Sandbox, ({ service }) =>
  Effect.promise(async () => merchantClient(service, await createMerchant(service.databaseUrl)))
)

interface Attempt {
  readonly id: string
  readonly deposit_request_id: string
  readonly kind: string
  readonly outcome: string
  readonly reason: string | null
  readonly wallet: string | null
  readonly attempted_at: string
}
type Page = { verification_attempts: Array<Attempt>; next_cursor: string | null }

const payer = privateKeyToAccount(generatePrivateKey())

/** A merchant-session request, a wrong secret, the right one, then the payer's wallet: three attempts. */
const attempted = Effect.gen(function* () {
  const { service, api } = yield* Sandbox
  return yield* Effect.promise(async () => {
    const refs = await api.setup()
    const made = await api.call<{ id: string; merchant_session_secret: string }>(
      "POST",
      "/v1/deposit-requests",
      {
        amount: "5.000000",
        issuer_id: refs.issuerId,
        payout_address_id: refs.payoutAddressId,
        payer_policy_mode: "merchant_session"
      },
      { "idempotency-key": randomUUID() }
    )
    const payerCall = (path: string, body: unknown) =>
      service.request(`/v1/payer/deposit-requests/${made.body.id}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    const wrong = await payerCall("merchant-session", { secret: "mss_not-the-secret" })
    const right = await payerCall("merchant-session", { secret: made.body.merchant_session_secret })
    const expiresAt = Math.floor(Date.now() / 1000) + 600
    const signature = await payer.signTypedData(
      typedData({ depositRequest: made.body.id, wallet: payer.address, chainId: 10143, expiresAt })
    )
    const wallet = await payerCall("wallet", {
      wallet: payer.address.toLowerCase(),
      chain_id: 10143,
      expires_at: expiresAt,
      signature
    })
    return { id: made.body.id, statuses: [wrong.status, right.status, wallet.status] }
  })
})

layer(sandboxLayer(), { timeout: 60_000 })("GET /v1/deposit-requests/{id}/verification-attempts", (it) => {
  it.effect("lists every attempt newest first, with the wallet of an attestation and nothing secret", () =>
    Effect.gen(function* () {
      const { api } = yield* Sandbox
      const { id, statuses } = yield* attempted
      assert.isAtLeast(statuses[0]!, 400)
      assert.deepStrictEqual(statuses.slice(1), [200, 200])
      const page = yield* Effect.promise(() =>
        api.call<Page>("GET", `/v1/deposit-requests/${id}/verification-attempts`)
      )
      assert.strictEqual(page.status, 200)
      assert.isNull(page.body.next_cursor)
      const attempts = page.body.verification_attempts
      assert.deepStrictEqual(
        attempts.map((a) => [a.kind, a.outcome]),
        [
          ["wallet", "accepted"],
          ["merchant_session", "accepted"],
          ["merchant_session", "refused"]
        ]
      )
      assert.strictEqual(attempts[0]!.wallet, payer.address)
      assert.isString(attempts[2]!.reason)
      for (const attempt of attempts) {
        assert.deepStrictEqual(Object.keys(attempt).sort(), [
          "attempted_at",
          "deposit_request_id",
          "id",
          "kind",
          "outcome",
          "reason",
          "wallet"
        ])
        assert.match(attempt.id, /^va_[0-9a-f-]{36}$/)
        assert.strictEqual(attempt.deposit_request_id, id)
        assert.match(attempt.attempted_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
      }
      assert.notMatch(JSON.stringify(page.body), /mss_|digest|code/)
    })
  )

  it.effect("pages with limit and starting_after through every attempt once", () =>
    Effect.gen(function* () {
      const { api } = yield* Sandbox
      const { id } = yield* attempted
      const seen: Array<string> = []
      let cursor: string | null = null
      do {
        const query: string = `limit=1${cursor === null ? "" : `&starting_after=${cursor}`}`
        const page = yield* Effect.promise(() =>
          api.call<Page>("GET", `/v1/deposit-requests/${id}/verification-attempts?${query}`)
        )
        assert.isAtMost(page.body.verification_attempts.length, 1)
        seen.push(...page.body.verification_attempts.map((a) => a.id))
        cursor = page.body.next_cursor
      } while (cursor !== null)
      assert.lengthOf(seen, 3)
      assert.strictEqual(new Set(seen).size, 3)
    })
  )

  it.effect("answers 404 for another account's request and for a malformed id", () =>
    Effect.gen(function* () {
      const other = yield* stranger
      const { id } = yield* attempted
      for (const path of [id, `dr_${randomUUID()}`, "dr_nope", id.slice(3)]) {
        const answer = yield* Effect.promise(() =>
          other.call<{ error: { code: string } }>("GET", `/v1/deposit-requests/${path}/verification-attempts`)
        )
        assert.strictEqual(answer.status, 404)
        assert.strictEqual(answer.body.error.code, "deposit_request_not_found")
      }
    })
  )
})
