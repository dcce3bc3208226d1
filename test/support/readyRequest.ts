import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { ActorHost } from "../../services/actors/ActorHost"
import type { MerchantClient } from "./Api"
import type { RunningService } from "./Service"
import { onService } from "./scopedResources"

/** One merchant call as an Effect. */
export const callApi = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))

/**
 * A new request of `amount`, its payer's wallet attested as the checkout would (straight through the actor host),
 * so the service raises `deposit_request.ready`: its `dr_` id.
 */
export const readyRequest = (service: RunningService, api: MerchantClient, amount: string, label: string) =>
  Effect.gen(function* () {
    const refs = yield* Effect.promise(() => api.setup())
    const created = yield* callApi<{ id: string }>(
      api,
      "POST",
      "/v1/deposit-requests",
      { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": `${label}-${Date.now()}-${Math.random()}` }
    )
    assert.strictEqual(created.status, 201)
    const uuid = created.body.id.slice(3)
    yield* onService(
      service,
      Effect.flatMap(ActorHost, (host) =>
        host.apply(uuid, `${label}-attest-${uuid}`, {
          type: "payer.wallet_attested",
          at: new Date().toISOString(),
          wallet: "0x1111111111111111111111111111111111111111",
          address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
        })
      )
    )
    return created.body.id
  })
