import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type pg from "pg"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { Sandbox, sandboxApply, sandboxCall, sandboxLayer } from "../../support/Sandbox"
import { scopedPgClient } from "../../support/scopedResources"
import { startService } from "../../support/Service"
import { createMerchant } from "../../support/Merchant"
import { merchantClient } from "../../support/Api"

/**
 * The hold on new payout addresses (infra/decisions/0077-payout-address-hold.md), over HTTP against the whole
 * service on the real PostgreSQL: with `PAYOUT_ADDRESS_HOLD_SECONDS` of a few seconds, a new address is refused by
 * a create and by a resume until its release time, which the refusal names; a session cancels one in its hold,
 * and after the release a cancel is refused. The sandbox default (0) holds nothing.
 */

const HOLD_SECONDS = 3

type ErrorBody = { error: { code: string; message: string; param?: string } }
type PayoutWire = ErrorBody & {
  id: string
  address: string
  disabled_at: string | null
  disabled_reason: string | null
  held_until: string | null
}
type RequestWire = ErrorBody & { id: string; status: string; payout_address_id: string }

class Db extends Context.Tag("test/PayoutHoldDb")<Db, pg.Client>() {}

const Live = Layer.scoped(
  Db,
  Effect.flatMap(Sandbox, ({ service }) => scopedPgClient(service.databaseUrl))
).pipe(
  Layer.provideMerge(
    sandboxWithReferences(
      sandboxLayer(() => ({ config: { payoutAddressHoldSeconds: Option.some(HOLD_SECONDS) } }))
    )
  )
)

const randomAddress = () => `0x${randomUUID().replaceAll("-", "").padEnd(40, "7")}`

const newPayout = () =>
  Effect.map(sandboxCall<PayoutWire>("POST", "/v1/payout-addresses", { address: randomAddress() }), (r) => {
    assert.strictEqual(r.status, 201)
    return r.body
  })

const createRequest = (payoutId: string) =>
  Effect.flatMap(MerchantReferences, (refs) =>
    sandboxCall<RequestWire>(
      "POST",
      "/v1/deposit-requests",
      { amount: "5.000000", issuer_id: refs.issuerId, payout_address_id: payoutId },
      { "idempotency-key": randomUUID() }
    )
  )

/** A call with the merchant's dashboard session rather than its API key. */
const sessionCall = <T>(method: string, path: string, body?: unknown) =>
  Effect.flatMap(Sandbox, ({ service, merchant }) =>
    Effect.promise(async () => {
      const res = await service.request(path, {
        method,
        headers: merchant.headers(
          "session",
          body === undefined ? {} : { "content-type": "application/json" }
        ),
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as T }
    })
  )

/** Until the address's release time has passed on the wall clock the service reads. */
const untilReleased = (payout: PayoutWire) =>
  Effect.promise(
    () => new Promise((resolve) => setTimeout(resolve, Date.parse(payout.held_until!) - Date.now() + 50))
  )

const apply = sandboxApply

/** A funded request whose settlement the token gate held because the payout address is blacklisted (as 0072's test). */
const blockedRequest = (payoutId: string) =>
  Effect.gen(function* () {
    const made = yield* createRequest(payoutId)
    assert.strictEqual(made.status, 201)
    const id = made.body.id
    const uuid = id.slice(3)
    const at = () => new Date().toISOString()
    const wallet = "0x1111111111111111111111111111111111111111"
    yield* apply(id, {
      type: "payer.wallet_attested",
      at: at(),
      wallet,
      address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
    })
    yield* apply(id, {
      type: "deposit.credited",
      at: at(),
      credit_id: `credit-${uuid}`,
      amount_base_units: "5000000",
      from: wallet
    })
    const db = yield* Db
    yield* Effect.promise(() =>
      db.query(
        `insert into held_transfers (command_id, deposit_request_id, topic, payload, code, reason, held_at)
         select payload->>'command_id', deposit_request_id, topic, payload, 'payout_address_blocked',
           'blacklisted by the token', now()
         from outbox where deposit_request_id = $1 and topic = 'command.settle'`,
        [uuid]
      )
    )
    yield* apply(id, {
      type: "attention.raised",
      at: at(),
      code: "payout_address_blocked",
      message: "USDC's issuer has blacklisted the payout address.",
      resolution: "Resume the request with another enabled payout address of the account (payout_address_id)."
    })
    return id
  })

layer(Live, { timeout: 120_000 })((it) => {
  describe(`with PAYOUT_ADDRESS_HOLD_SECONDS=${HOLD_SECONDS}`, () => {
    it.effect("a create naming a new payout address is refused until its release time, then taken", () =>
      Effect.gen(function* () {
        const before = Date.now()
        const payout = yield* newPayout()
        assert.isNotNull(payout.held_until)
        const release = Date.parse(payout.held_until!)
        // Rounded up to the second: never earlier than the hold, at most a second later.
        assert.isAtLeast(release, before + HOLD_SECONDS * 1000 - 1000)
        assert.isAtMost(release, Date.now() + HOLD_SECONDS * 1000 + 1000)
        assert.isNull(payout.disabled_at)

        const refused = yield* createRequest(payout.id)
        assert.strictEqual(refused.status, 409)
        assert.strictEqual(refused.body.error.code, "invalid_state")
        assert.include(refused.body.error.message, payout.held_until!)
        // A second refusal goes the same way (the create remembers addresses it has seen, the claim checks again).
        const again = yield* createRequest(payout.id)
        assert.strictEqual(again.status, 409)

        yield* untilReleased(payout)
        const created = yield* createRequest(payout.id)
        assert.strictEqual(created.status, 201)
        assert.strictEqual(created.body.payout_address_id, payout.id)

        // Released: the hold can no longer be cancelled; disabling is the way.
        const late = yield* sessionCall<PayoutWire>("POST", `/v1/payout-addresses/${payout.id}/cancel`)
        assert.strictEqual(late.status, 409)
        assert.strictEqual(late.body.error.code, "invalid_state")
        const read = yield* sandboxCall<PayoutWire>("GET", `/v1/payout-addresses/${payout.id}`)
        assert.isNull(read.body.disabled_at)
        assert.strictEqual(read.body.held_until, payout.held_until)
      })
    )

    it.effect(
      "a session cancels an address the API key added during its hold; it never takes a request",
      () =>
        Effect.gen(function* () {
          const payout = yield* newPayout()
          const cancelled = yield* sessionCall<PayoutWire>("POST", `/v1/payout-addresses/${payout.id}/cancel`)
          assert.strictEqual(cancelled.status, 200)
          assert.isNotNull(cancelled.body.disabled_at)
          assert.strictEqual(cancelled.body.disabled_reason, "hold_cancelled")

          const twice = yield* sessionCall<PayoutWire>("POST", `/v1/payout-addresses/${payout.id}/cancel`)
          assert.strictEqual(twice.status, 409)
          assert.strictEqual(twice.body.error.code, "invalid_state")

          yield* untilReleased(payout)
          const refused = yield* createRequest(payout.id)
          assert.strictEqual(refused.status, 400)
          assert.strictEqual(refused.body.error.code, "invalid_request")
          assert.strictEqual(refused.body.error.param, "payout_address_id")

          const log = yield* sessionCall<{ entries: Array<{ action: string; target_id: string | null }> }>(
            "GET",
            "/v1/account/audit-log?limit=100"
          )
          assert.strictEqual(log.status, 200)
          const entries = log.body.entries.filter((e) => e.target_id === payout.id).map((e) => e.action)
          assert.deepStrictEqual(entries, ["payout_address.hold_cancelled", "payout_address.created"])

          const unknown = yield* sessionCall<PayoutWire>(
            "POST",
            `/v1/payout-addresses/pa_${randomUUID().replaceAll("-", "")}/cancel`
          )
          assert.strictEqual(unknown.status, 404)
          assert.strictEqual(unknown.body.error.code, "payout_address_not_found")
        })
    )

    it.effect("a resume to another payout address refuses one in its hold with its release time", () =>
      Effect.gen(function* () {
        const blocked = yield* newPayout()
        yield* untilReleased(blocked)
        const id = yield* blockedRequest(blocked.id)
        const fresh = yield* newPayout()
        const refused = yield* sessionCall<RequestWire>("POST", `/v1/deposit-requests/${id}/resume`, {
          payout_address_id: fresh.id
        })
        assert.strictEqual(refused.status, 409)
        assert.strictEqual(refused.body.error.code, "invalid_state")
        assert.include(refused.body.error.message, fresh.held_until!)

        yield* untilReleased(fresh)
        const resumed = yield* sessionCall<RequestWire>("POST", `/v1/deposit-requests/${id}/resume`, {
          payout_address_id: fresh.id
        })
        assert.strictEqual(resumed.status, 200)
        assert.strictEqual(resumed.body.payout_address_id, fresh.id)
      })
    )
  })

  describe("with the sandbox default", () => {
    it.effect("a new payout address has no hold and takes a request at once", () =>
      Effect.promise(async () => {
        const service = await startService()
        try {
          const api = merchantClient(service, await createMerchant(service.databaseUrl))
          const refs = await api.setup()
          const payout = await api.call<PayoutWire>("GET", `/v1/payout-addresses/${refs.payoutAddressId}`)
          assert.isNull(payout.body.held_until)
          const created = await api.call<RequestWire>(
            "POST",
            "/v1/deposit-requests",
            { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
            { "idempotency-key": randomUUID() }
          )
          assert.strictEqual(created.status, 201)
          const cancel = await api.call<ErrorBody>(
            "POST",
            `/v1/payout-addresses/${refs.payoutAddressId}/cancel`
          )
          assert.strictEqual(cancel.status, 409)
          assert.strictEqual(cancel.body.error.code, "invalid_state")
        } finally {
          await service.stop()
        }
      })
    )
  })
})
