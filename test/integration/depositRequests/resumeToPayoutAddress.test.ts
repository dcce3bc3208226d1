import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { Sandbox, sandboxApply, sandboxCall, sandboxLayer } from "../../support/Sandbox"
import { scopedPgClient } from "../../support/scopedResources"

/**
 * A request paused because USDC's issuer blacklisted its payout address is resumed to another payout address of the
 * account: over HTTP with a dashboard session, the pause raised as the treasury's token gate raises it.
 */

type ErrorBody = { error: { code: string; message: string; param?: string } }
type Wire = ErrorBody & {
  id: string
  status: string
  payout_address_id: string
  attention: { code: string } | null
}
type PayoutWire = { id: string; address: string; disabled_at: string | null; disabled_reason: string | null }

class Db extends Context.Tag("test/ResumeDb")<Db, pg.Client>() {}

const Live = Layer.scoped(
  Db,
  Effect.flatMap(Sandbox, ({ service }) => scopedPgClient(service.databaseUrl))
).pipe(Layer.provideMerge(sandboxWithReferences(sandboxLayer())))

const AMOUNT = "5000000"
const WALLET = "0x1111111111111111111111111111111111111111"

const newPayout = (address: string) =>
  Effect.map(sandboxCall<PayoutWire>("POST", "/v1/payout-addresses", { address }), (r) => {
    assert.strictEqual(r.status, 201)
    return r.body
  })

const randomAddress = () => `0x${randomUUID().replaceAll("-", "").padEnd(40, "7")}`

const apply = sandboxApply

/** The merchant's resume, with the dashboard session a resume needs; `body` undefined sends none. */
const resume = (id: string, body?: unknown) =>
  Effect.flatMap(Sandbox, ({ service, merchant }) =>
    Effect.promise(async () => {
      const res = await service.request(`/v1/deposit-requests/${id}/resume`, {
        method: "POST",
        headers: merchant.headers(
          "session",
          body === undefined ? {} : { "content-type": "application/json" }
        ),
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: res.status, body: (await res.json()) as Wire }
    })
  )

/**
 * A funded request to `payoutId` whose settlement the token gate held: the settle command kept in `held_transfers`,
 * the request paused with `code` (as `TokenGate.hold` does).
 */
const pausedRequest = (payoutId: string, code = "payout_address_blocked") =>
  Effect.gen(function* () {
    const refs = yield* MerchantReferences
    const db = yield* Db
    const made = yield* sandboxCall<Wire>(
      "POST",
      "/v1/deposit-requests",
      { amount: "5.000000", issuer_id: refs.issuerId, payout_address_id: payoutId },
      { "idempotency-key": randomUUID() }
    )
    assert.strictEqual(made.status, 201)
    const id = made.body.id
    const uuid = id.slice(3)
    const at = () => new Date().toISOString()
    yield* apply(id, {
      type: "payer.wallet_attested",
      at: at(),
      wallet: WALLET,
      address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
    })
    yield* apply(id, {
      type: "deposit.credited",
      at: at(),
      credit_id: `credit-${uuid}`,
      amount_base_units: AMOUNT,
      from: WALLET
    })
    yield* Effect.promise(() =>
      db.query(
        `insert into held_transfers (command_id, deposit_request_id, topic, payload, code, reason, held_at)
         select payload->>'command_id', deposit_request_id, topic, payload, $2, 'blacklisted by the token', now()
         from outbox where deposit_request_id = $1 and topic = 'command.settle'`,
        [uuid, code]
      )
    )
    yield* apply(id, {
      type: "attention.raised",
      at: at(),
      code,
      message: "USDC's issuer has blacklisted the payout address.",
      resolution: "Resume the request with another enabled payout address of the account (payout_address_id)."
    })
    return id
  })

const rows = <T extends Record<string, unknown>>(text: string, values: ReadonlyArray<unknown>) =>
  Effect.flatMap(Db, (db) => Effect.promise(async () => (await db.query<T>(text, [...values])).rows))

layer(Live, { timeout: 120_000 })((it) => {
  describe("POST /v1/deposit-requests/{id}/resume with payout_address_id", () => {
    it.effect("is refused unless the pause is payout_address_blocked, and a plain resume still works", () =>
      Effect.gen(function* () {
        const blocked = yield* newPayout(randomAddress())
        const other = yield* newPayout(randomAddress())
        const id = yield* pausedRequest(blocked.id, "transfer_reverted")
        const refused = yield* resume(id, { payout_address_id: other.id })
        assert.strictEqual(refused.status, 409)
        assert.strictEqual(refused.body.error.code, "invalid_state")
        assert.match(refused.body.error.message, /payout_address_blocked/)
        // Unknown fields are refused as on every body.
        const unknown = yield* resume(id, { payout_address: other.address })
        assert.strictEqual(unknown.status, 400)
        assert.strictEqual(unknown.body.error.code, "invalid_request")
        // An empty object is a plain resume, like no body at all: the held settlement is retried as it was.
        const plain = yield* resume(id, {})
        assert.strictEqual(plain.status, 200)
        assert.strictEqual(plain.body.status, "deposited")
        assert.strictEqual(plain.body.payout_address_id, blocked.id)
        const retries = yield* rows<{ command_id: string }>(
          `select payload->>'command_id' as command_id from outbox
           where deposit_request_id = $1 and topic = 'command.retry'`,
          [id.slice(3)]
        )
        assert.deepStrictEqual(
          retries.map((r) => r.command_id),
          [`settle:${id}`]
        )
        // Not paused any more: nothing to resume.
        const again = yield* resume(id, { payout_address_id: other.id })
        assert.strictEqual(again.status, 409)
        assert.strictEqual(again.body.error.code, "invalid_state")
        const enabled = yield* sandboxCall<PayoutWire>("GET", `/v1/payout-addresses/${blocked.id}`)
        assert.isNull(enabled.body.disabled_at)
        assert.isNull(enabled.body.disabled_reason)
      })
    )

    it.effect(
      "is refused for another account's payout address (404), a disabled one, the same one, and with no body stays a plain resume",
      () =>
        Effect.gen(function* () {
          const { service } = yield* Sandbox
          const blocked = yield* newPayout(randomAddress())
          const id = yield* pausedRequest(blocked.id)

          const stranger: MerchantClient = merchantClient(
            service,
            yield* Effect.promise(() => createMerchant(service.databaseUrl))
          )
          const theirs = yield* Effect.promise(() => stranger.setup())
          const foreign = yield* resume(id, { payout_address_id: theirs.payoutAddressId })
          assert.strictEqual(foreign.status, 404)
          assert.strictEqual(foreign.body.error.code, "payout_address_not_found")

          const off = yield* newPayout(randomAddress())
          assert.strictEqual(
            (yield* sandboxCall("POST", `/v1/payout-addresses/${off.id}/disable`)).status,
            200
          )
          const disabled = yield* resume(id, { payout_address_id: off.id })
          assert.strictEqual(disabled.status, 400)
          assert.strictEqual(disabled.body.error.code, "invalid_request")
          assert.strictEqual(disabled.body.error.param, "payout_address_id")
          assert.match(disabled.body.error.message, /disabled/)

          const same = yield* resume(id, { payout_address_id: blocked.id })
          assert.strictEqual(same.status, 400)
          assert.strictEqual(same.body.error.param, "payout_address_id")

          const malformed = yield* resume(id, {
            payout_address_id: "cus_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b"
          })
          assert.strictEqual(malformed.status, 400)
          assert.strictEqual(malformed.body.error.code, "invalid_request")

          // Nothing changed: still paused, still the blocked address, which is still enabled.
          const read = yield* sandboxCall<Wire>("GET", `/v1/deposit-requests/${id}`)
          assert.strictEqual(read.body.status, "needs_attention")
          assert.strictEqual(read.body.payout_address_id, blocked.id)
          assert.isNull(
            (yield* sandboxCall<PayoutWire>("GET", `/v1/payout-addresses/${blocked.id}`)).body.disabled_at
          )

          // No body at all: the plain resume as before.
          const plain = yield* resume(id)
          assert.strictEqual(plain.status, 200)
          assert.strictEqual(plain.body.status, "deposited")
        })
    )

    it.effect(
      "settles to the new address under a new command id, disables the blocked one and records it in the history",
      () =>
        Effect.gen(function* () {
          const blocked = yield* newPayout(randomAddress())
          const other = yield* newPayout(randomAddress())
          const id = yield* pausedRequest(blocked.id)
          const uuid = id.slice(3)

          const resumed = yield* resume(id, { payout_address_id: other.id })
          assert.strictEqual(resumed.status, 200)
          assert.strictEqual(resumed.body.status, "deposited")
          assert.isNull(resumed.body.attention)
          assert.strictEqual(resumed.body.payout_address_id, other.id)

          const old = yield* sandboxCall<PayoutWire>("GET", `/v1/payout-addresses/${blocked.id}`)
          assert.isString(old.body.disabled_at)
          assert.strictEqual(old.body.disabled_reason, "blocked_by_token")
          const now = yield* sandboxCall<PayoutWire>("GET", `/v1/payout-addresses/${other.id}`)
          assert.isNull(now.body.disabled_at)
          assert.isNull(now.body.disabled_reason)

          // One new settlement to the new address under a new id; the held one is neither retried nor kept.
          const commands = yield* rows<{ topic: string; command_id: string; to: string }>(
            `select topic, payload->>'command_id' as command_id, payload->>'to' as to from outbox
             where deposit_request_id = $1 and topic like 'command.%' order by id`,
            [uuid]
          )
          assert.deepStrictEqual(commands, [
            { topic: "command.settle", command_id: `settle:${id}`, to: blocked.address },
            { topic: "command.settle", command_id: `settle:${id}:redirect:1`, to: other.address }
          ])
          assert.deepStrictEqual(
            yield* rows("select command_id from held_transfers where deposit_request_id = $1", [uuid]),
            []
          )

          // The request's history: the resume, with the new address, and the settlement it commanded.
          const steps = yield* sandboxCall<{
            data: Array<{
              event: { type: string; payout_address?: string }
              status_after: string
              emitted: { commands: Array<string> }
            }>
          }>("GET", `/v1/deposit-requests/${id}/steps`)
          assert.strictEqual(steps.status, 200)
          const step = steps.body.data.at(-1)!
          assert.strictEqual(step.event.type, "operator.resumed")
          assert.strictEqual(step.event.payout_address, other.address)
          assert.deepStrictEqual(step.emitted.commands, ["settle"])

          // A second resume to yet another address, after the new one is blocked too: redirect 2.
          const third = yield* newPayout(randomAddress())
          yield* apply(id, {
            type: "attention.raised",
            at: new Date().toISOString(),
            code: "payout_address_blocked",
            message: "Blocked again.",
            resolution: "Resume with another payout address."
          })
          const twice = yield* resume(id, { payout_address_id: third.id })
          assert.strictEqual(twice.status, 200)
          assert.strictEqual(twice.body.payout_address_id, third.id)
          const latest = yield* rows<{ command_id: string; to: string }>(
            `select payload->>'command_id' as command_id, payload->>'to' as to from outbox
             where deposit_request_id = $1 and topic = 'command.settle' order by id desc limit 1`,
            [uuid]
          )
          assert.deepStrictEqual(latest, [{ command_id: `settle:${id}:redirect:2`, to: third.address }])
          const second = yield* sandboxCall<PayoutWire>("GET", `/v1/payout-addresses/${other.id}`)
          assert.strictEqual(second.body.disabled_reason, "blocked_by_token")
        })
    )
  })
})
