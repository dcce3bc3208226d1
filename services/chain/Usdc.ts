import {
  type Address,
  erc20Abi,
  type Hex,
  hashDomain,
  type LocalAccount,
  parseAbi,
  parseSignature,
  type PublicClient
} from "viem"

/**
 * The token interface the service relies on, and nothing of any one deployment: ERC-20, EIP-3009's
 * `transferWithAuthorization` and `cancelAuthorization`, the EIP-712 domain's parts, and the controls of Circle's
 * FiatToken (`Pausable`, `Blacklistable`), which USDC has on every chain Circle issues on.
 */
export const usdcAbi = [
  ...erc20Abi,
  ...parseAbi([
    "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
    "function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
    "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
    "function version() view returns (string)",
    "function DOMAIN_SEPARATOR() view returns (bytes32)",
    "function paused() view returns (bool)",
    "function isBlacklisted(address account) view returns (bool)"
  ])
] as const

/** The token's EIP-712 domain: read from the contract, never assumed (`name()` is whatever it was given). */
export interface TokenDomain {
  readonly name: string
  readonly version: string
  readonly chainId: number
  readonly verifyingContract: Address
}

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
 * split as `transferWithAuthorization` takes it, for the token's own domain.
 */
export const signTransferAuthorization = async (
  holder: LocalAccount,
  domain: TokenDomain,
  message: TransferAuthorization
) => {
  const signature = await holder.signTypedData({
    domain,
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

/** The reason a token cannot be used as USDC, in words for a start-up refusal or a log line. */
export class TokenDomainError extends Error {
  override readonly name = "TokenDomainError"
}

/**
 * Reads the token's EIP-712 domain (`name()`, `version()`) and proves it by recomputing the contract's own
 * `DOMAIN_SEPARATOR()`: a domain that does not hash to it would make every authorization fail as an invalid
 * signature, so it is refused here rather than found in a settlement.
 */
export const readTokenDomain = async (
  client: Pick<PublicClient, "readContract">,
  token: Address,
  chainId: number
): Promise<TokenDomain> => {
  const read = <F extends "name" | "version" | "DOMAIN_SEPARATOR">(functionName: F) =>
    client.readContract({ address: token, abi: usdcAbi, functionName }).catch((cause: unknown) => {
      throw new TokenDomainError(`${token} does not answer ${functionName}() (${messageOf(cause)})`)
    })
  const [name, version, separator] = await Promise.all([
    read("name"),
    read("version"),
    read("DOMAIN_SEPARATOR")
  ])
  const domain: TokenDomain = { name, version, chainId, verifyingContract: token }
  const computed = hashDomain({
    domain: { ...domain, chainId: BigInt(chainId) },
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" }
      ]
    }
  })
  if (computed.toLowerCase() !== separator.toLowerCase())
    throw new TokenDomainError(
      `${token}'s DOMAIN_SEPARATOR is not the EIP-712 domain of name "${name}", version "${version}", chain ${chainId}`
    )
  return domain
}

const messageOf = (cause: unknown) =>
  cause instanceof Error ? (cause.message.split("\n")[0] ?? cause.message) : String(cause)
