import {
  type Account,
  type Address,
  type Chain,
  type Client,
  getContractAddress,
  type Hash,
  encodeDeployData,
  encodeFunctionData,
  type Hex,
  maxUint256,
  type Transport
} from "viem"
import {
  getCode,
  getTransactionCount,
  sendTransaction,
  waitForTransactionReceipt,
  writeContract
} from "viem/actions"
import {
  fiatTokenProxyArtifact,
  fiatTokenV2_2Artifact,
  linkBytecode,
  SIGNATURE_CHECKER,
  signatureCheckerArtifact
} from "../contracts/artifacts"
import { fiatTokenAbi, fiatTokenProxyAbi } from "../contracts/FiatToken"
import { anvilDevAccount, DEV_ACCOUNT } from "./Anvil"

/** USDC has 6 decimals: 1 USDC = 1,000,000 base units. */
export const USDC_DECIMALS = 6

/** What a deployed USDC is: its address (the proxy's), the implementation behind it and the linked library. */
export interface DeployedUsdc {
  readonly address: Address
  readonly implementation: Address
  readonly signatureChecker: Address
}

export interface UsdcDeployment {
  /** `name()`, and so the EIP-712 domain's name: "USDC" as Circle's newer deployments answer. */
  readonly name?: string
  readonly symbol?: string
  /**
   * Owner, master minter, pauser, blacklister, rescuer and lost-and-found: one account in the sandbox (dev account 0),
   * which is also configured as an unlimited minter (the faucet).
   */
  readonly roles?: Account
  /**
   * The proxy's admin; it cannot call the token through the proxy, so never the roles' account nor a payer. It sends
   * nothing here (the proxy is handed to it), so it needs no gas.
   */
  readonly proxyAdmin?: Account
}

/** Circle's address for an implementation's throwaway initialisation. */
const THROWAWAY: Address = "0x0000000000000000000000000000000000000001"

/** Gas limits given (so nothing is estimated against contracts not mined yet): above what each uses. */
const GAS = {
  signatureChecker: 600_000n,
  implementation: 6_000_000n,
  proxy: 700_000n,
  call: 400_000n
} as const

/**
 * Deploys Circle's FiatToken v2.2 as Circle does on every chain: the SignatureChecker library, the implementation
 * linked to it (initialised with throwaway values so nobody else can), the FiatTokenProxy in front of it (handed at
 * once to its own admin, as Circle's proxies have one), then through the proxy `initialize`, `initializeV2`,
 * `initializeV2_1`, `initializeV2_2` and `configureMinter`. One account sends every transaction at consecutive
 * nonces, the addresses worked out from them, and all are waited for at the end: on interval mining the whole
 * deployment takes one block, not one each.
 */
export const deployUsdc = async (
  client: Client<Transport, Chain | undefined>,
  options: UsdcDeployment = {}
): Promise<DeployedUsdc> => {
  const roles = options.roles ?? anvilDevAccount(DEV_ACCOUNT.faucetOwner)
  const proxyAdmin = options.proxyAdmin ?? anvilDevAccount(DEV_ACCOUNT.proxyAdmin)
  const name = options.name ?? "USDC"
  const symbol = options.symbol ?? "USDC"
  const chain = client.chain ?? null
  let nonce = await getTransactionCount(client, { address: roles.address, blockTag: "pending" })
  const sent: Array<{ readonly what: string; readonly hash: Hash }> = []

  /** Sends creation code (constructor arguments appended); answers the address the contract will have. */
  const deploy = async (what: string, data: Hex, gas: bigint) => {
    const at = getContractAddress({ from: roles.address, nonce: BigInt(nonce) })
    sent.push({
      what,
      hash: await sendTransaction(client, { account: roles, chain, nonce: nonce++, data, gas })
    })
    return at
  }
  const call = async (address: Address, what: string, data: Hex) =>
    sent.push({
      what,
      hash: await sendTransaction(client, {
        account: roles,
        chain,
        nonce: nonce++,
        to: address,
        data,
        gas: GAS.call
      })
    })
  const initialise = async (address: Address, calls: ReturnType<typeof initialisation>) => {
    for (const c of calls)
      await call(
        address,
        c.functionName,
        encodeFunctionData({ abi: fiatTokenAbi, ...c } as unknown as Parameters<typeof encodeFunctionData>[0])
      )
  }

  const signatureChecker = await deploy(
    "SignatureChecker",
    signatureCheckerArtifact().bytecode,
    GAS.signatureChecker
  )
  const v2_2 = fiatTokenV2_2Artifact()
  const implementation = await deploy(
    "FiatTokenV2_2",
    linkBytecode(v2_2.bytecode, v2_2.linkReferences, { [SIGNATURE_CHECKER]: signatureChecker }),
    GAS.implementation
  )
  // The implementation itself is initialised with throwaway values, as Circle's deploy script does.
  await initialise(implementation, initialisation("", "", 0, THROWAWAY, THROWAWAY))
  const address = await deploy(
    "FiatTokenProxy",
    encodeDeployData({
      abi: fiatTokenProxyAbi,
      bytecode: fiatTokenProxyArtifact().bytecode,
      args: [implementation]
    }),
    GAS.proxy
  )
  await call(
    address,
    "changeAdmin",
    encodeFunctionData({ abi: fiatTokenProxyAbi, functionName: "changeAdmin", args: [proxyAdmin.address] })
  )
  await initialise(address, [
    ...initialisation(name, symbol, USDC_DECIMALS, roles.address, roles.address),
    { functionName: "configureMinter", args: [roles.address, maxUint256] }
  ])
  for (const { what, hash } of sent) {
    const receipt = await waitForTransactionReceipt(client, { hash, pollingInterval: 50 })
    if (receipt.status !== "success") throw new Error(`deploying USDC: ${what} reverted in ${hash}`)
  }
  return { address, implementation, signatureChecker }
}

const initialisation = (
  name: string,
  symbol: string,
  decimals: number,
  roles: Address,
  lostAndFound: Address
): ReadonlyArray<{ readonly functionName: string; readonly args: ReadonlyArray<unknown> }> => [
  {
    functionName: "initialize",
    args: [name, symbol, name === "" ? "" : "USD", decimals, roles, roles, roles, roles]
  },
  { functionName: "initializeV2", args: [name] },
  { functionName: "initializeV2_1", args: [lostAndFound] },
  { functionName: "initializeV2_2", args: [[], symbol] }
]

/** The sandbox's faucet: mints `amount` base units to `to` and waits for the block. Only a minter may. */
export const mintUsdc = async (
  client: Client<Transport, Chain | undefined>,
  params: {
    readonly token: Address
    readonly to: Address
    readonly amount: bigint
    readonly minter?: Account
  }
): Promise<Hash> =>
  roleCall(
    client,
    params.token,
    params.minter,
    "mint",
    [params.to, params.amount],
    `minting USDC to ${params.to}`
  )

/** The blacklister's and pauser's powers, as the sandbox and the tests use them (dev account 0 holds both). */
export const usdcControls = (
  client: Client<Transport, Chain | undefined>,
  token: Address,
  holder?: Account
) => ({
  blacklist: (who: Address) => roleCall(client, token, holder, "blacklist", [who], `blacklisting ${who}`),
  unBlacklist: (who: Address) =>
    roleCall(client, token, holder, "unBlacklist", [who], `unblacklisting ${who}`),
  pause: () => roleCall(client, token, holder, "pause", [], "pausing USDC"),
  unpause: () => roleCall(client, token, holder, "unpause", [], "unpausing USDC")
})

const roleCall = async (
  client: Client<Transport, Chain | undefined>,
  token: Address,
  holder: Account | undefined,
  functionName: "mint" | "blacklist" | "unBlacklist" | "pause" | "unpause",
  args: ReadonlyArray<unknown>,
  what: string
): Promise<Hash> => {
  const hash = await writeContract(client, {
    address: token,
    abi: fiatTokenAbi,
    functionName,
    args,
    account: holder ?? anvilDevAccount(DEV_ACCOUNT.faucetOwner),
    chain: client.chain ?? null
  } as unknown as Parameters<typeof writeContract>[1])
  const receipt = await waitForTransactionReceipt(client, { hash, pollingInterval: 50 })
  if (receipt.status !== "success") throw new Error(`${what} reverted in transaction ${hash}`)
  return hash
}

/**
 * Whether `address` holds Circle's FiatTokenProxy (its runtime code has no immutables, so it is the artifact's
 * byte for byte); a chain kept from an older sandbox may hold another token there.
 */
export const holdsUsdcProxy = async (client: Client<Transport, Chain | undefined>, address: Address) => {
  const code = await getCode(client, { address })
  return code !== undefined && code.toLowerCase() === fiatTokenProxyArtifact().deployedBytecode.toLowerCase()
}
