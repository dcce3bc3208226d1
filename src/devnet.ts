import { Option } from "effect"
import { createWalletClient, getAddress, http, publicActions } from "viem"
import { anvilChain } from "../infra/chain/Anvil"
import { mintTestUsdc } from "../infra/chain/deployTestUsdc"
import { parseAmount } from "./api/Schemas"
import type { AppConfigShape } from "./Config"
import { chainIdOf } from "./Environment"

/**
 * The sandbox faucet: mints test USDC to an address on the configured local chain, signed by the token's owner
 * (the local chain's dev account 0). Refused in production.
 */
export const fund = async (
  config: AppConfigShape,
  address: string | undefined,
  amount: string | undefined
) => {
  if (config.serviceEnv !== "sandbox") throw new Error("devnet fund is for the sandbox only")
  if (Option.isNone(config.chainRpcUrl) || Option.isNone(config.tokenAddress)) {
    throw new Error("set CHAIN_RPC_URL and TOKEN_ADDRESS to the local chain and its test USDC")
  }
  if (address === undefined || !/^0x[0-9a-fA-F]{40}$/.test(address))
    throw new Error("--address must be a 0x address")
  const baseUnits = amount === undefined ? undefined : parseAmount(amount)
  if (baseUnits === undefined || baseUnits <= 0n)
    throw new Error("--amount must be a positive decimal USDC amount")
  const rpcUrl = config.chainRpcUrl.value
  const client = createWalletClient({
    chain: anvilChain({ chainId: chainIdOf(config.serviceEnv), rpcUrl }),
    transport: http(rpcUrl, { retryCount: 0 })
  }).extend(publicActions)
  const hash = await mintTestUsdc(client, {
    token: getAddress(config.tokenAddress.value),
    to: getAddress(address.toLowerCase()),
    amount: baseUnits
  })
  return {
    address: getAddress(address.toLowerCase()),
    amount_base_units: baseUnits.toString(),
    transaction_hash: hash
  }
}
