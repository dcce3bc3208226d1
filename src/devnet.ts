import { Option } from "effect"
import { createWalletClient, getAddress, http, publicActions } from "viem"
import { anvilChain } from "../infra/chain/Anvil"
import { mintTestUsdc } from "../infra/chain/deployTestUsdc"
import { readEmbeddedChain } from "../services/EmbeddedChain"
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
  // Without CHAIN_RPC_URL: the embedded chain of a running `npm start` on the same DATA_DIR.
  const embedded = readEmbeddedChain(config.dataDir)
  const rpcUrl = Option.getOrUndefined(
    Option.orElse(config.chainRpcUrl, () => Option.map(embedded, (c) => c.rpc_url))
  )
  const token = Option.getOrUndefined(
    Option.isSome(config.chainRpcUrl) ? config.tokenAddress : Option.map(embedded, (c) => c.token_address)
  )
  if (rpcUrl === undefined || token === undefined) {
    throw new Error(
      "no local chain: start the service (`npm start` runs an embedded chain) or set CHAIN_RPC_URL and TOKEN_ADDRESS"
    )
  }
  if (address === undefined || !/^0x[0-9a-fA-F]{40}$/.test(address))
    throw new Error("--address must be a 0x address")
  const baseUnits = amount === undefined ? undefined : parseAmount(amount)
  if (baseUnits === undefined || baseUnits <= 0n)
    throw new Error("--amount must be a positive decimal USDC amount")
  const client = createWalletClient({
    chain: anvilChain({ chainId: chainIdOf(config.serviceEnv), rpcUrl }),
    transport: http(rpcUrl, { retryCount: 0 })
  }).extend(publicActions)
  const hash = await mintTestUsdc(client, {
    token: getAddress(token),
    to: getAddress(address.toLowerCase()),
    amount: baseUnits
  })
  return {
    address: getAddress(address.toLowerCase()),
    amount_base_units: baseUnits.toString(),
    transaction_hash: hash
  }
}
