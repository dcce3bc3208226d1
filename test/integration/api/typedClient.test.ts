import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Id } from "../../../services/domain/PrefixedId"
import { Sandbox, sandboxLayer } from "../../support/Sandbox"
import { typedMerchantClient } from "../../support/TypedClient"

// Routes called through the client derived from the `HttpApi`: the calls are typed by the contract and every
// answer is decoded by its schemas, so a handler whose answer drifts from the published contract fails here.

const client = Effect.flatMap(Sandbox, ({ service, merchant }) => typedMerchantClient(service, merchant))

/** An issuer and a payout address of the merchant, as the create's body names them. */
const references = (display_name: string) =>
  Effect.gen(function* () {
    const api = yield* client
    const issuer = yield* api.issuers.create({ payload: { display_name } })
    const payout = yield* api.payoutAddresses.create({
      payload: { address: "0x52908400098527886e0f7030069857d2e4169ee7" }
    })
    return {
      issuer,
      payout,
      issuer_id: Schema.decodeSync(Id("iss"))(issuer.id),
      payout_address_id: Schema.decodeSync(Id("pa"))(payout.id)
    }
  })

layer(sandboxLayer(), { timeout: 60_000 })("the API through its typed client", (it) => {
  it.effect("creates a deposit request from an issuer and a payout address, reads it back and lists it", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { issuer, payout, issuer_id, payout_address_id } = yield* references("Acme Books")
      const created = yield* api.depositRequests.create({
        headers: { "idempotency-key": "typed-client-1" },
        payload: { amount: 25_000_000n, heading: "Invoice 7", issuer_id, payout_address_id }
      })
      expect(created.status).toBe("awaiting_payer")
      expect(created.amount).toBe("25.000000")
      expect(created.amount_base_units).toBe("25000000")
      expect(created.issuer_id).toBe(issuer.id)
      expect(created.payout_address_id).toBe(payout.id)

      const read = yield* api.depositRequests.get({ path: { id: created.id }, urlParams: { timeout: 25 } })
      expect(read.version).toBe(created.version)
      expect(read.heading).toBe("Invoice 7")

      const page = yield* api.depositRequests.list({ urlParams: { limit: 5 } })
      expect(page.deposit_requests.map((r) => r.id)).toContain(created.id)
    })
  )

  it.effect("replays a create with the same key and body as the original resource", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { issuer_id, payout_address_id } = yield* references("Replay Ltd")
      const create = api.depositRequests.create({
        headers: { "idempotency-key": "typed-client-replay" },
        payload: { amount: 1_500_000n, issuer_id, payout_address_id }
      })
      const first = yield* create
      const again = yield* create
      expect(again.id).toBe(first.id)
      expect(again.created_at).toBe(first.created_at)
    })
  )
})
