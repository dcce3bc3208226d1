import { Either } from "effect"

/**
 * When a block counts as final: the node's `finalized` block (the default; on a proof-of-stake chain the chain's
 * own finality), or N confirmations for a node without it: a block is final once it is N deep, the newest block
 * being 1 deep, so the final head is `latest − (N − 1)`.
 */
export type Finality =
  | { readonly _tag: "FinalizedTag" }
  | { readonly _tag: "Confirmations"; readonly n: number }

export const FINALIZED_TAG: Finality = { _tag: "FinalizedTag" }
export const MAX_CONFIRMATIONS = 10_000

/** `finalized`, or a whole number of confirmations from 1 to 10,000 (the setting `CHAIN_FINALITY`). */
export const parseFinality = (text: string): Either.Either<Finality, string> => {
  const value = text.trim()
  if (value === "finalized") return Either.right(FINALIZED_TAG)
  if (/^\d+$/.test(value)) {
    const n = Number(value)
    if (n >= 1 && n <= MAX_CONFIRMATIONS) return Either.right({ _tag: "Confirmations", n })
  }
  return Either.left(`must be "finalized" or a number of confirmations from 1 to ${MAX_CONFIRMATIONS}`)
}

export const describeFinality = (finality: Finality): string =>
  finality._tag === "FinalizedTag" ? "finalized" : String(finality.n)

/** Anything that sends a JSON-RPC request: a viem client's `request`. */
export type JsonRpc = (args: { method: string; params: ReadonlyArray<unknown> }) => Promise<unknown>

/** The newest final block number, by the rule configured (0 while the chain is younger than the rule). */
export const finalBlockNumber = async (request: JsonRpc, finality: Finality): Promise<bigint> => {
  if (finality._tag === "FinalizedTag") {
    const block = (await request({ method: "eth_getBlockByNumber", params: ["finalized", false] })) as {
      number: string
    } | null
    return block === null ? 0n : BigInt(block.number)
  }
  const latest = BigInt((await request({ method: "eth_blockNumber", params: [] })) as string)
  const head = latest - BigInt(finality.n - 1)
  return head < 0n ? 0n : head
}
