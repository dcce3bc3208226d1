import type { Account, Address, Chain, Client, Hash, Transport } from "viem"
import { deployContract, waitForTransactionReceipt, writeContract } from "viem/actions"
import { abi, bytecode } from "../contracts/TestUsdc"
import { anvilDevAccount, DEV_ACCOUNT } from "./Anvil"

/** USDC has 6 decimals: 1 USDC = 1,000,000 base units. */
export const USDC_DECIMALS = 6

/**
 * Deploys the test USDC and waits for it to be mined. The deployer becomes the token's owner, the only account
 * allowed to `mint` (the sandbox faucet); by default anvil's dev account 0.
 */
export const deployTestUsdc = async (
  client: Client<Transport, Chain | undefined>,
  owner: Account = anvilDevAccount(DEV_ACCOUNT.faucetOwner)
): Promise<Address> => {
  const hash = await deployContract(client, { abi, bytecode, account: owner, chain: client.chain ?? null })
  const receipt = await waitForTransactionReceipt(client, { hash })
  if (receipt.status !== "success" || receipt.contractAddress == null) {
    throw new Error(`deploying TestUsdc failed in transaction ${hash} (status ${receipt.status})`)
  }
  return receipt.contractAddress
}

/** Sandbox faucet: mints `amount` base units to `to` and waits for the block. Only the token's owner may. */
export const mintTestUsdc = async (
  client: Client<Transport, Chain | undefined>,
  params: {
    readonly token: Address
    readonly to: Address
    readonly amount: bigint
    readonly owner?: Account
  }
): Promise<Hash> => {
  const hash = await writeContract(client, {
    address: params.token,
    abi,
    functionName: "mint",
    args: [params.to, params.amount],
    account: params.owner ?? anvilDevAccount(DEV_ACCOUNT.faucetOwner),
    chain: client.chain ?? null
  })
  const receipt = await waitForTransactionReceipt(client, { hash })
  if (receipt.status !== "success") throw new Error(`minting test USDC reverted in transaction ${hash}`)
  return hash
}
