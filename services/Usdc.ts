import { erc20Abi, parseAbi } from "viem"

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
