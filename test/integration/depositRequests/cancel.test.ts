import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { sandboxApply, sandboxCall, sandboxLayer } from "../../support/Sandbox"

/**
 * Issue 48 (4): a merchant cancels a request nobody has paid. It expires at once with the reason kept, a
 * `deposit_request.expired` event follows, a retried cancel answers the same, and once anything has arrived (or
 * the request has ended) the cancel is refused and changes nothing.
 */
type ErrorBody = { error: { code: string; message: string } }
type Wire = ErrorBody & {
  id: string
  status: string
  version: string
  cancellation: { reason: string | null; cancelled_at: string } | null
}

const WALLET = "0x1111111111111111111111111111111111111111"

const created = Effect.gen(function* () {
  const refs = yield* MerchantReferences
  const made = yield* sandboxCall<Wire>(
    "POST",
    "/v1/deposit-requests",
    { amount: "5.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
    { "idempotency-key": randomUUID() }
  )
  assert.strictEqual(made.status, 201)
  assert.isNull(made.body.cancellation)
  return made.body
})

const apply = sandboxApply

const ready = (id: string) =>
  apply(id, {
    type: "payer.wallet_attested",
    at: new Date().toISOString(),
    wallet: WALLET,
    address: `0x${id.slice(3).replaceAll("-", "").padEnd(40, "0")}`
  })

const cancel = (id: string, body?: unknown) =>
  sandboxCall<Wire>("POST", `/v1/deposit-requests/${id}/cancel`, body)
const read = (id: string) => sandboxCall<Wire>("GET", `/v1/deposit-requests/${id}`)

layer(sandboxWithReferences(sandboxLayer()), { timeout: 60_000 })("cancelling a deposit request", (it) => {
  describe("nobody has paid", () => {
    it.effect(
      "awaiting its payer: expired at once with the reason, an expired event, a retry answers the same",
      () =>
        Effect.gen(function* () {
          const request = yield* created
          const done = yield* cancel(request.id, { reason: "The customer changed the order." })
          assert.strictEqual(done.status, 200, JSON.stringify(done.body))
          assert.strictEqual(done.body.status, "expired")
          assert.strictEqual(done.body.cancellation?.reason, "The customer changed the order.")
          assert.match(done.body.cancellation?.cancelled_at ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
          assert.deepStrictEqual((yield* read(request.id)).body, done.body)
          const events = yield* sandboxCall<{ events: Array<{ type: string }> }>(
            "GET",
            `/v1/events?deposit_request_id=${request.id}`
          )
          assert.deepStrictEqual(
            events.body.events.map((e) => e.type),
            ["deposit_request.expired"]
          )
          // Retried (a lost answer, say): the same request, no second event.
          const again = yield* cancel(request.id)
          assert.strictEqual(again.status, 200)
          assert.deepStrictEqual(again.body, done.body)
          const after = yield* sandboxCall<{ events: Array<{ type: string }> }>(
            "GET",
            `/v1/events?deposit_request_id=${request.id}`
          )
          assert.strictEqual(after.body.events.length, 1)
        })
    )

    it.effect("ready, with its address given and nothing received: cancelled without a body", () =>
      Effect.gen(function* () {
        const request = yield* created
        yield* ready(request.id)
        assert.strictEqual((yield* read(request.id)).body.status, "ready")
        const done = yield* cancel(request.id)
        assert.strictEqual(done.status, 200, JSON.stringify(done.body))
        assert.strictEqual(done.body.status, "expired")
        assert.deepStrictEqual(done.body.cancellation && { reason: done.body.cancellation.reason }, {
          reason: null
        })
      })
    )
  })

  describe("refused", () => {
    it.effect("once a payment has arrived, and changes nothing", () =>
      Effect.gen(function* () {
        const request = yield* created
        yield* ready(request.id)
        yield* apply(request.id, {
          type: "deposit.credited",
          at: new Date().toISOString(),
          credit_id: `credit-${request.id}`,
          amount_base_units: "1000000",
          from: WALLET
        })
        const before = (yield* read(request.id)).body
        assert.strictEqual(before.status, "partially_deposited")
        const refused = yield* cancel(request.id, { reason: "too late" })
        assert.strictEqual(refused.status, 409)
        assert.strictEqual(refused.body.error.code, "invalid_state")
        assert.include(refused.body.error.message, "A payment has arrived")
        assert.deepStrictEqual((yield* read(request.id)).body, before)
      })
    )

    it.effect("once it has expired at its deadline; an unknown id is a 404; a bad body a 400", () =>
      Effect.gen(function* () {
        const request = yield* created
        yield* apply(request.id, { type: "deadline.reached", at: new Date().toISOString() })
        const refused = yield* cancel(request.id)
        assert.strictEqual(refused.status, 409)
        assert.include(refused.body.error.message, "this one is expired")
        const unknown = yield* cancel(`dr_${randomUUID()}`)
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.body.error.code, "deposit_request_not_found")
        const open = yield* created
        const long = yield* cancel(open.id, { reason: "x".repeat(501) })
        assert.strictEqual(long.status, 400)
        const unknownField = yield* cancel(open.id, { reason: "ok", refund: true })
        assert.strictEqual(unknownField.status, 400)
        assert.strictEqual((yield* read(open.id)).body.status, "awaiting_payer")
      })
    )
  })
})
