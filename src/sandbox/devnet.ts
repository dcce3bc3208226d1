import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Redacted } from "effect"
import {
  createTestClient,
  createWalletClient,
  getAddress,
  http,
  parseEther,
  publicActions,
  walletActions
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilChain, anvilDevAccount, DEV_ACCOUNT } from "../../infra/chain/Anvil"
import { typedData } from "../../services/payer/WalletAttestation"
import { mintUsdc, usdcControls } from "../../infra/chain/deployUsdc"
import { fiatTokenAbi as abi } from "../../infra/contracts/FiatToken"
import { addressRefusal, checksummed, NOT_AN_ADDRESS } from "../../services/domain/Address"
import { parseAmount } from "../../services/domain/Amount"
import { type ChainSettings, rpcEndpointsOf } from "../../services/chain/ChainSettings"
import { chainIdOf } from "../../services/domain/Environment"

/** What the sandbox commands need of the settings: the environment, the chain endpoints and the token. */
export type DevnetSettings = Pick<
  ChainSettings,
  "serviceEnv" | "chainRpcUrl" | "chainRpcUrls" | "tokenAddress"
>

/**
 * The local chain a sandbox command talks to: the configured one, or the embedded chain of a running `npm start`
 * on the same DATA_DIR (see `withRunningChain`). Refused in production and when no chain is known.
 */
const localChain = (config: DevnetSettings, command: string) => {
  if (config.serviceEnv !== "sandbox") throw new Error(`${command} is for the sandbox only`)
  const rpcUrl = rpcEndpointsOf(config)[0]
  const tokenAddress = Option.getOrUndefined(config.tokenAddress)
  if (rpcUrl === undefined || tokenAddress === undefined) {
    throw new Error(
      "no local chain: start the service (`npm start` runs an embedded chain) or set CHAIN_RPC_URL and TOKEN_ADDRESS"
    )
  }
  const chain = anvilChain({ chainId: chainIdOf(config.serviceEnv), rpcUrl })
  const transport = http(rpcUrl, { retryCount: 0 })
  const node = createTestClient({ mode: "anvil", chain, transport })
    .extend(publicActions)
    .extend(walletActions)
  return { token: getAddress(tokenAddress), chain, transport, node }
}

/**
 * The sandbox faucet: mints USDC to an address on the configured local chain, signed by the token's minter
 * (the local chain's dev account 0, which holds every role of the sandbox's FiatToken). Refused in production.
 */
export const fund = async (
  config: DevnetSettings,
  address: string | undefined,
  amount: string | undefined
) => {
  const { token, chain, transport } = localChain(config, "devnet fund")
  const refusal = address === undefined ? NOT_AN_ADDRESS : addressRefusal(address)
  if (address === undefined || refusal !== undefined) throw new Error(`--address ${refusal}`)
  const baseUnits = amount === undefined ? undefined : parseAmount(amount)
  if (baseUnits === undefined || baseUnits <= 0n)
    throw new Error("--amount must be a positive USDC amount with six fractional digits, such as 12.500000")
  const client = createWalletClient({ chain, transport }).extend(publicActions)
  const hash = await mintUsdc(client, {
    token,
    to: checksummed(address),
    amount: baseUnits
  })
  return {
    address: checksummed(address),
    amount_base_units: baseUnits.toString(),
    transaction_hash: hash
  }
}

/** What the sandbox's USDC roles can do to the token, as Circle's pauser and blacklister do on a real chain. */
export type TokenControl = "blacklist" | "unblacklist" | "pause" | "unpause"

/**
 * Sandbox: uses the token's pauser or blacklister role (the local chain's dev account 0), so the faults that only
 * the real USDC has can be tried: a blacklisted payout address, payer wallet or deposit address, a paused token.
 */
export const controlToken = async (
  config: DevnetSettings,
  control: TokenControl,
  address: string | undefined
) => {
  const { token, chain, transport } = localChain(config, `devnet ${control}`)
  const controls = usdcControls(createWalletClient({ chain, transport }).extend(publicActions), token)
  if (control === "pause" || control === "unpause") {
    const hash = await controls[control]()
    return { token, state: control === "pause" ? "paused" : "unpaused", transaction_hash: hash }
  }
  const refusal = address === undefined ? NOT_AN_ADDRESS : addressRefusal(address)
  if (address === undefined || refusal !== undefined) throw new Error(`--address ${refusal}`)
  const hash = await (control === "blacklist" ? controls.blacklist : controls.unBlacklist)(
    checksummed(address)
  )
  return {
    token,
    address: checksummed(address),
    state: control === "blacklist" ? "blacklisted" : "unblacklisted",
    transaction_hash: hash
  }
}

export type PayMode = "exact" | "partial" | "over" | "stranger" | "late"

/**
 * Sandbox: pays a request on the local chain the way a payer would, or the ways a payer should not, so every
 * money path can be tried on `npm start`. The payer's attested wallet is impersonated on the local node (no key
 * needed), funded with test USDC and gas, and sends a plain token transfer to the deposit address. A stranger is a
 * fresh wallet. Amounts: `exact` what is still owed, `partial` half of it, `over` it plus 1 USDC, `late` the
 * whole amount again (for after settlement or expiry), `stranger` what is owed from another wallet; `amount`
 * overrides.
 */
export const payRequest = async (
  config: DevnetSettings,
  request: {
    readonly depositAddress: string
    readonly payerWallet: string
    readonly amountBaseUnits: bigint
    readonly receivedBaseUnits: bigint
  },
  mode: PayMode,
  amount: string | undefined
) => {
  const { token, chain, transport, node } = localChain(config, "devnet pay")
  const owed = request.amountBaseUnits - request.receivedBaseUnits
  const byMode: Record<PayMode, bigint> = {
    exact: owed > 0n ? owed : request.amountBaseUnits,
    partial: owed / 2n > 0n ? owed / 2n : 1n,
    over: (owed > 0n ? owed : 0n) + 1_000_000n,
    late: request.amountBaseUnits,
    stranger: owed > 0n ? owed : request.amountBaseUnits
  }
  const explicit = amount === undefined ? undefined : parseAmount(amount)
  if (amount !== undefined && (explicit === undefined || explicit <= 0n))
    throw new Error("--amount must be a positive USDC amount with six fractional digits, such as 12.500000")
  const value = explicit ?? byMode[mode]
  const from =
    mode === "stranger" ? privateKeyToAccount(generatePrivateKey()).address : getAddress(request.payerWallet)
  const faucet = createWalletClient({ chain, transport }).extend(publicActions)
  await mintUsdc(faucet, { token, to: from, amount: value })
  await node.setBalance({ address: from, value: 10n ** 18n })
  await node.impersonateAccount({ address: from })
  try {
    const hash = await node.writeContract({
      address: token,
      abi,
      functionName: "transfer",
      args: [getAddress(request.depositAddress), value],
      account: from,
      chain
    })
    await node.waitForTransactionReceipt({ hash })
    return {
      mode,
      from,
      to: getAddress(request.depositAddress),
      amount_base_units: value.toString(),
      transaction_hash: hash
    }
  } finally {
    await node.stopImpersonatingAccount({ address: from })
  }
}

/**
 * Sandbox: sets the treasury account's gas (ETH) on the local chain. `--eth 0` makes the next payout fail
 * (`treasury_out_of_gas`: the request pauses for an operator); funding it again and resuming the request settles it.
 */
export const setTreasuryGas = async (
  config: DevnetSettings & { readonly treasuryPrivateKey: Option.Option<Redacted.Redacted<string>> },
  eth: string | undefined
) => {
  const { node } = localChain(config, "devnet treasury-gas")
  if (eth === undefined || !/^\d+(\.\d{1,18})?$/.test(eth))
    throw new Error("--eth must be a decimal amount of ETH")
  const treasury = Option.match(config.treasuryPrivateKey, {
    onSome: (key) => privateKeyToAccount(Redacted.value(key) as `0x${string}`).address,
    onNone: () => anvilDevAccount(DEV_ACCOUNT.treasury).address
  })
  const value = parseEther(eth)
  await node.setBalance({ address: treasury, value })
  return { treasury, balance_wei: value.toString() }
}

/**
 * The sandbox payer: a dev account of the local chain (anvil's public mnemonic, an index neither the faucet nor the
 * treasury uses), so its key is known to everyone and it is never a wallet anyone's money depends on.
 */
export const SANDBOX_PAYER_INDEX = 9

/**
 * Sandbox: attests the sandbox payer's wallet for a request waiting for its payer, the way the checkout does: the
 * wallet signs the EIP-712 statement and the running service's payer route checks it and releases the one-time
 * address. Through the service, not its tables: the attestation is the request's lifecycle step, and the service's
 * watcher learns the new address from it. A request whose policy still owes a proof is refused as the route
 * refuses it.
 */
export const attestWallet = async (
  config: Pick<ChainSettings, "serviceEnv">,
  serviceUrl: string,
  depositRequestId: string,
  nowMs: number = Date.now()
) => {
  if (config.serviceEnv !== "sandbox") throw new Error("devnet attest is for the sandbox only")
  const payer = anvilDevAccount(SANDBOX_PAYER_INDEX)
  const statement = {
    depositRequest: depositRequestId,
    wallet: payer.address,
    chainId: chainIdOf(config.serviceEnv),
    // Ten minutes: a statement may be valid for at most 24 hours, and this one is used at once.
    expiresAt: Math.floor(nowMs / 1000) + 600
  }
  const url = `${serviceUrl.replace(/\/+$/, "")}/v1/payer/deposit-requests/${depositRequestId}/wallet`
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      wallet: statement.wallet,
      chain_id: statement.chainId,
      expires_at: statement.expiresAt,
      signature: await payer.signTypedData(typedData(statement))
    })
  }).catch((e: unknown) => {
    throw new Error(
      `no service answers at ${serviceUrl} (${e instanceof Error ? e.message : String(e)}): start it with \`npm start\`, or name it with API=http://localhost:PORT (or --url)`
    )
  })
  const body = (await res.json().catch(() => ({}))) as {
    readonly address?: string
    readonly error?: { readonly code?: string; readonly message?: string; readonly doc_url?: string }
  }
  if (!res.ok || body.address === undefined) {
    // `docUrl`: the CLI prints the code's line on the service's error page under the message.
    throw Object.assign(
      new Error(
        `the service refused the attestation (${res.status} ${body.error?.code ?? "no error code"}): ${body.error?.message ?? "no message"}`
      ),
      { docUrl: body.error?.doc_url }
    )
  }
  return {
    deposit_request_id: depositRequestId,
    wallet: payer.address,
    deposit_address: getAddress(body.address)
  }
}

/** Why `payTargetOf` has no target while the request still waits for its payer's wallet. */
export const NO_WALLET_YET =
  "the request has no deposit address yet: attest a wallet first (devnet attest --request DR_ID)"

/** The request as `payRequest` needs it: its deposit address and attested wallet, amount and what arrived. */
export const payTargetOf = (uuid: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      deposit_address: string | null
      payer_wallet: string | null
      amount_base_units: string
      received_base_units: string
    }>`
      select deposit_address, snapshot->'context'->>'payer_wallet' as payer_wallet, amount_base_units,
        received_base_units
      from deposit_requests where id = ${uuid}`
    const row = rows[0]
    if (row === undefined) return Either.left("no such deposit request")
    if (row.deposit_address === null || row.payer_wallet === null) return Either.left(NO_WALLET_YET)
    return Either.right({
      depositAddress: row.deposit_address,
      payerWallet: row.payer_wallet,
      amountBaseUnits: BigInt(row.amount_base_units),
      receivedBaseUnits: BigInt(row.received_base_units)
    })
  })
