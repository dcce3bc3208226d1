import { type Address, type Hex, verifyTypedData } from "viem"

/** The EIP-712 statement a payer signs to bind a wallet to one deposit request, on one chain, until a deadline. */
export const attestationDomain = (chainId: number) =>
  ({ name: "Deposit Request Service", version: "1", chainId }) as const

export const attestationTypes = {
  WalletAttestation: [
    { name: "depositRequest", type: "string" },
    { name: "wallet", type: "address" },
    { name: "chainId", type: "uint256" },
    { name: "expiresAt", type: "uint256" }
  ]
} as const

export interface Statement {
  readonly depositRequest: string
  readonly wallet: Address
  readonly chainId: number
  /** Unix seconds. */
  readonly expiresAt: number
}

/** The typed data as a wallet signs it (`eth_signTypedData_v4`). */
export const typedData = (s: Statement) => ({
  domain: attestationDomain(s.chainId),
  types: attestationTypes,
  primaryType: "WalletAttestation" as const,
  message: {
    depositRequest: s.depositRequest,
    wallet: s.wallet,
    chainId: BigInt(s.chainId),
    expiresAt: BigInt(s.expiresAt)
  }
})

/**
 * Checks a statement: it names this request and this chain, has not expired, and is signed by the wallet it
 * names (an EOA signature here; smart-contract wallets need the chain client, see the README). Returns the
 * refusal, or undefined when it holds.
 */
export const refusalOf = async (
  s: Statement,
  signature: Hex,
  expected: { readonly depositRequest: string; readonly chainId: number; readonly nowSeconds: number }
): Promise<{ param: string; message: string } | undefined> => {
  if (s.depositRequest !== expected.depositRequest) {
    return { param: "signature", message: "The statement names another deposit request." }
  }
  if (s.chainId !== expected.chainId)
    return { param: "chain_id", message: `The statement must name chain ${expected.chainId}.` }
  if (s.expiresAt <= expected.nowSeconds)
    return { param: "expires_at", message: "The statement has expired." }
  if (s.expiresAt > expected.nowSeconds + 24 * 3600) {
    return { param: "expires_at", message: "The statement may be valid for at most 24 hours." }
  }
  const valid = await verifyTypedData({ address: s.wallet, signature, ...typedData(s) }).catch(() => false)
  return valid
    ? undefined
    : { param: "signature", message: "The signature is not the wallet's signature of this statement." }
}
