import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { DepositRequests } from "../../services/depositRequests/DepositRequests"
import { toId } from "../../services/domain/PrefixedId"
import { Issuers, PayoutAddresses } from "../../services/merchants/MerchantResources"

const PAYOUT = "0x52908400098527886E0F7030069857D2E4169EE7"

/**
 * A request ready for events, made the way production makes one (no HTTP): an issuer and a payout address of the
 * account, then the deposit request service's create. Returns the request's bare UUID.
 */
export const seedDepositRequest = (accountId: string, amountBaseUnits = "100") =>
  Effect.gen(function* () {
    const issuer = yield* (yield* Issuers).create(accountId, { display_name: "Seeded issuer" })
    const payout = yield* (yield* PayoutAddresses).create(accountId, { address: PAYOUT })
    const created = yield* (yield* DepositRequests).create(accountId, `seed-${randomUUID()}`, {
      amount: BigInt(amountBaseUnits),
      issuer_id: toId("iss", issuer.id),
      payout_address_id: toId("pa", payout.id)
    })
    return created.wire.id.slice("dr_".length)
  })
