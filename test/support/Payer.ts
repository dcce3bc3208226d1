import { randomUUID } from "node:crypto"
import type { Address, HDAccount, LocalAccount } from "viem"
import { typedData } from "../../services/payer/WalletAttestation"
import type { MerchantClient } from "./Api"
import type { HttpTarget } from "./Service"

/**
 * A merchant request made ready by a payer over HTTP: created (to `payoutTo`, or the merchant's default payout
 * address), then the payer's wallet attested with a real EIP-712 signature, which releases the one-time address.
 */
export const readyRequest = async (
  parties: {
    readonly service: HttpTarget
    readonly api: MerchantClient
    readonly payer: HDAccount | LocalAccount
  },
  amount: string,
  payoutTo?: Address,
  /** The chain the payer signs for: the sandbox's 10143, or production's 143. */
  chainId = 10143
) => {
  const { service, api, payer } = parties
  const refs = await api.setup()
  const payoutAddressId =
    payoutTo === undefined
      ? refs.payoutAddressId
      : (await api.call<{ id: string }>("POST", "/v1/payout-addresses", { address: payoutTo })).body.id
  const made = await api.call<{ id: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: payoutAddressId },
    { "idempotency-key": randomUUID() }
  )
  const statement = {
    depositRequest: made.body.id,
    wallet: payer.address,
    chainId,
    expiresAt: Math.floor(Date.now() / 1000) + 600
  }
  const res = await service.request(`/v1/payer/deposit-requests/${made.body.id}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      wallet: payer.address,
      chain_id: chainId,
      expires_at: statement.expiresAt,
      signature: await payer.signTypedData(typedData(statement))
    })
  })
  const body = (await res.json()) as { address: Address }
  return { id: made.body.id, address: body.address }
}
