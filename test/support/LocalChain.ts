import {
  type Account,
  type Address,
  createTestClient,
  createWalletClient,
  http,
  publicActions,
  walletActions
} from "viem"
import { type AnvilOptions, anvilChain, anvilDevAccount, startAnvil } from "../../infra/chain/Anvil"
import { deployUsdc, mintUsdc, type UsdcDeployment, usdcControls } from "../../infra/chain/deployUsdc"
import { fiatTokenAbi as abi } from "../../infra/contracts/FiatToken"
import { makeChainAccess } from "../../services/chain/ChainEndpoints"

/** The service's chain access to endpoints of a local node: one try each (a local node fails only on purpose). */
export const chainAccessOf = (...urls: ReadonlyArray<string>) =>
  makeChainAccess(urls, { chainRpcTimeoutMs: 5_000, chainRpcRetries: 0, chainRpcMaxLagBlocks: 5 })

/**
 * Clients of a running local node and its USDC (Circle's FiatToken v2.2): the node (test, public and wallet
 * actions), the faucet (dev account 0, which holds every role of the token), balances, minting, plain transfers,
 * and the blacklister's and pauser's powers.
 */
export const localChainClients = (
  node: { readonly chainId: number; readonly rpcUrl: string },
  token: Address
) => {
  const transport = http(node.rpcUrl, { retryCount: 0 })
  // Poll often: a local node answers at once, and viem's default would wait seconds between receipt checks.
  const chain = createTestClient({ mode: "anvil", chain: anvilChain(node), transport, pollingInterval: 50 })
    .extend(publicActions)
    .extend(walletActions)
  const faucet = createWalletClient({
    chain: anvilChain(node),
    transport,
    account: anvilDevAccount(0),
    pollingInterval: 50
  }).extend(publicActions)

  const balanceOf = (who: Address) =>
    chain.readContract({ address: token, abi, functionName: "balanceOf", args: [who] })

  /** Mints USDC to `to` (dev account 0 is the token's minter). */
  const mint = (to: Address, amount: bigint) => mintUsdc(faucet, { token, to, amount })

  /** A plain token transfer from `from`, waited for; returns its receipt. */
  const pay = async (from: Account, to: Address, amount: bigint) => {
    const hash = await chain.writeContract({
      address: token,
      abi,
      functionName: "transfer",
      args: [to, amount],
      account: from,
      chain: null
    })
    return chain.waitForTransactionReceipt({ hash })
  }
  return { chain, faucet, balanceOf, mint, pay, controls: usdcControls(faucet, token) }
}

/**
 * A local node with Circle's FiatToken v2.2 behind its proxy, for tests that drive the chain themselves: by default
 * automine with `finalized` two blocks behind `latest`, so finality advances only as the test mines.
 */
export const startLocalChain = async (options: AnvilOptions & { readonly usdc?: UsdcDeployment } = {}) => {
  const { usdc, ...anvil } = options
  const node = await startAnvil({ slotsInAnEpoch: 1, ...anvil })
  const deployer = localChainClients(node, "0x0000000000000000000000000000000000000000")
  const deployed = await deployUsdc(deployer.faucet, usdc)
  const token = deployed.address
  const { chain, balanceOf, mint, pay, controls } = localChainClients(node, token)

  /** Mines a block now and then while waiting, so `finalized` keeps moving (automine only mines on transactions). */
  const mineUntil = async <A>(read: () => Promise<A | undefined>, ms = 30_000): Promise<A> => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      const value = await read()
      if (value !== undefined) return value
      await chain.mine({ blocks: 1 })
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error("timed out")
  }

  return { node, chain, token, deployed, balanceOf, mint, pay, controls, mineUntil }
}

export type LocalChain = Awaited<ReturnType<typeof startLocalChain>>
