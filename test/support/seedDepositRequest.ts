import { Effect } from "effect"
import { v7 } from "uuid"
import { ActorHost } from "../../services/ActorHost"

/** A request created straight through the actor host (no HTTP, no references checked), ready for events. */
export const seedDepositRequest = (accountId: string, amount = "100") =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const id = v7()
    const now = new Date()
    const expires = new Date(now.getTime() + 24 * 3600_000)
    yield* host.create(
      {
        id,
        account_id: accountId,
        amount_base_units: amount,
        heading: "",
        reference: "",
        metadata: {},
        customer_id: null,
        issuer_id: v7(),
        payout_address_id: v7(),
        payer_policy_mode: "none",
        expected_email: null,
        payer_reference: null,
        deposit_index: null,
        deposit_address: null,
        expires_at: expires,
        created_at: now
      },
      {
        id: `dr_${id}`,
        amount_base_units: amount,
        payout_address: "0x52908400098527886E0F7030069857D2E4169EE7",
        payer_policy_mode: "none",
        expires_at: expires.toISOString(),
        created_at: now.toISOString()
      }
    )
    return id
  })
