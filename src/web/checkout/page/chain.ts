import { encodeFunctionData, erc20Abi } from "viem"
import { owed } from "./amounts"
import type { PayerRead } from "./read"

/** An EIP-1193 provider, as the wallet gives it (wallet.ts finds it; this file stays free of the DOM). */
interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>
}

/**
 * What the page reads of the chain, through the payer's own wallet (its provider talks to its own node; the page
 * calls nothing but its service, CSP `connect-src 'self'`): balances before the payer confirms, and the transfer it
 * sent until a receipt says how it ended. Bounds and reasons: decision 0088.
 */

/** Gas a USDC transfer is counted at for the fee check (FiatToken's transfer uses about 35–65 thousand). */
export const TRANSFER_GAS = 100_000n
/** How often the transfer is looked up while it waits. */
export const POLL_MS = 1_000
/** A transfer the wallet's node has never shown (or no longer shows) for this long is dropped. */
export const DROP_AFTER_MS = 60_000
/** A wallet that cannot be asked about its transfer for this long is no longer followed (pay comes back). */
export const UNANSWERED_MS = 120_000
/** Past this, a transfer still waiting is left to the wallet: the payer can speed it up or cancel it there. */
export const FOLLOW_FOR_MS = 10 * 60_000

const hex = (n: number) => `0x${n.toString(16)}`
const big = (value: unknown): bigint =>
  typeof value === "string" && /^0x[0-9a-fA-F]+$/.test(value) ? BigInt(value) : 0n

/** Whether the wallet is on the request's chain now. */
export const onChain = async (provider: Eip1193, chainId: number) =>
  String(await provider.request({ method: "eth_chainId" })).toLowerCase() === hex(chainId)

/** The wallet's current account, asked without a prompt (`eth_accounts`); undefined while it shares none. */
export const currentAccount = async (provider: Eip1193): Promise<string | undefined> => {
  const accounts = (await provider.request({ method: "eth_accounts" })) as Array<string> | null
  return accounts?.[0]
}

export const sameAccount = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase()

/** What a wallet lacks to pay: USDC (base units), or the network's coin for the fee (wei). */
export type Shortfall =
  | { readonly kind: "usdc"; readonly have: bigint; readonly missing: bigint; readonly amount: bigint }
  | { readonly kind: "fee"; readonly missingWei: bigint }

/** Wei in micro-units of the coin (6 decimals, rounded up, never zero): what money formatting takes. */
export const microCoin = (wei: bigint): bigint => {
  const micro = (wei + 999_999_999_999n) / 1_000_000_000_000n
  return micro > 0n ? micro : 1n
}

/**
 * What the wallet lacks to pay what is owed, said in money before the payer confirms anything: USDC first, then
 * the network's coin for the fee (at `TRANSFER_GAS` times the node's gas price). A wallet that cannot read
 * balances is not held back: undefined, and the wallet itself says what it lacks.
 */
export const shortfall = async (
  provider: Eip1193,
  account: string,
  read: PayerRead
): Promise<Shortfall | undefined> => {
  const value = owed(read.amount_base_units, read.received_base_units)
  if (read.token_address === null || value <= 0n) return undefined
  try {
    const held = big(
      await provider.request({
        method: "eth_call",
        params: [
          {
            to: read.token_address,
            data: encodeFunctionData({
              abi: erc20Abi,
              functionName: "balanceOf",
              args: [account as `0x${string}`]
            })
          },
          "latest"
        ]
      })
    )
    if (held < value) return { kind: "usdc", have: held, missing: value - held, amount: value }
    const [native, gasPrice] = await Promise.all([
      provider.request({ method: "eth_getBalance", params: [account, "latest"] }),
      provider.request({ method: "eth_gasPrice" })
    ])
    const fee = TRANSFER_GAS * big(gasPrice)
    if (big(native) < fee) return { kind: "fee", missingWei: fee - big(native) }
    return undefined
  } catch {
    return undefined
  }
}

/** How a transfer ended, as far as this page follows it. */
export type Outcome = "confirmed" | "reverted" | "replaced" | "dropped" | "pending" | "unanswered"

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Follows a transfer the wallet sent to its receipt on the request's chain, through the wallet's provider:
 * `eth_getTransactionReceipt` every `POLL_MS`; while there is none, `eth_getTransactionByHash` for its nonce. A
 * receipt with status 0 is a revert; a transaction gone from the node after its nonce was used (the account's
 * count passed it) is replaced; one unknown for `DROP_AFTER_MS` is dropped; a wallet that does not answer these
 * reads for `UNANSWERED_MS` is no longer followed. Only looked up on the request's chain:
 * while the wallet is elsewhere nothing is concluded and `elsewhere` is told.
 */
export const followTransfer = async (
  provider: Eip1193,
  account: string,
  hash: string,
  chainId: number,
  elsewhere: () => void
): Promise<Outcome> => {
  const started = Date.now()
  let seen = started
  let answered = started
  let nonce: bigint | undefined
  const receipt = async () =>
    (await provider.request({ method: "eth_getTransactionReceipt", params: [hash] })) as {
      status?: string
    } | null
  while (Date.now() - started < FOLLOW_FOR_MS) {
    try {
      if (!(await onChain(provider, chainId))) {
        elsewhere()
        seen = Date.now()
        await pause(POLL_MS)
        continue
      }
      const got = await receipt()
      answered = Date.now()
      if (got !== null && got !== undefined) return big(got.status) === 1n ? "confirmed" : "reverted"
      const tx = (await provider.request({ method: "eth_getTransactionByHash", params: [hash] })) as {
        nonce?: string
      } | null
      if (tx !== null && tx !== undefined) {
        seen = Date.now()
        if (tx.nonce !== undefined) nonce = big(tx.nonce)
      } else if (nonce !== undefined) {
        const count = big(
          await provider.request({ method: "eth_getTransactionCount", params: [account, "latest"] })
        )
        // The nonce was used by another transaction: ours can no longer be mined (checked once more for a race).
        if (count > nonce && ((await receipt()) ?? null) === null) return "replaced"
      }
      if (Date.now() - seen > DROP_AFTER_MS) return "dropped"
    } catch {
      // A wallet or node hiccup: asked again at the next poll. A wallet that never answers these reads is left
      // after UNANSWERED_MS, as the page did before it followed transfers.
      if (Date.now() - answered > UNANSWERED_MS) return "unanswered"
    }
    await pause(POLL_MS)
  }
  return "pending"
}
