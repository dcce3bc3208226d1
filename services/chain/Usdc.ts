import { type Address, erc20Abi, type Hex, type LocalAccount, parseAbi, parseSignature } from "viem"

/**
 * The token interface the service relies on, and nothing of any one deployment: ERC-20 plus EIP-3009's
 * `transferWithAuthorization` (Circle's USDC on every chain, and the sandbox's test token, implement both).
 */
export const usdcAbi = [
  ...erc20Abi,
  ...parseAbi([
    "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
    "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)"
  ])
] as const

/** The fields of an EIP-3009 `TransferWithAuthorization`. */
export interface TransferAuthorization {
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  readonly validAfter: bigint
  readonly validBefore: bigint
  readonly nonce: Hex
}

/**
 * An EIP-3009 transfer authorization signed locally by the holder's key (no node involved), with the signature
 * split as `transferWithAuthorization` takes it. The domain is USDC's own ("USD Coin", version 2).
 */
export const signTransferAuthorization = async (
  holder: LocalAccount,
  domain: { readonly chainId: number; readonly token: Address },
  message: TransferAuthorization
) => {
  const signature = await holder.signTypedData({
    domain: { name: "USD Coin", version: "2", chainId: domain.chainId, verifyingContract: domain.token },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" }
      ]
    },
    primaryType: "TransferWithAuthorization",
    message
  })
  const { v, r, s } = parseSignature(signature)
  return { ...message, v: Number(v ?? 27n), r, s }
}
