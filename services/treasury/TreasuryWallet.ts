import { type Address, createWalletClient, type Hex, publicActions } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { ChainAccess } from "../chain/ChainEndpoints"
import type { Finality } from "../chain/Finality"

/** The treasury account on the configured chain: it signs and pays gas for settlements and returns. */
export const makeTreasuryWallet = (options: {
  readonly chainAccess: ChainAccess
  readonly token: Address
  readonly treasuryKey: Hex
  readonly chainId: number
  readonly chainFinality: Finality
}) => {
  const account = privateKeyToAccount(options.treasuryKey)
  const chain = {
    id: options.chainId,
    name: "deposits",
    nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [...options.chainAccess.urls] } }
  } as const
  const wallet = createWalletClient({
    account,
    chain,
    transport: options.chainAccess.transport
  }).extend(publicActions)
  return {
    /** For calls answered together in one JSON-RPC batch (receipts of many transfers at once). */
    chainAccess: options.chainAccess,
    account,
    chain,
    wallet,
    chainId: options.chainId,
    token: options.token,
    chainFinality: options.chainFinality
  }
}
export type TreasuryWallet = ReturnType<typeof makeTreasuryWallet>
