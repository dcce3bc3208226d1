import { Effect } from "effect"
import { type Address, getAddress, toHex } from "viem"
import { blockCall, type ChainAccess } from "./ChainEndpoints"
import { chainCall } from "./ChainRpc"
import {
  appendCredit,
  type CreditColumns,
  emptyCreditColumns,
  type RawLog,
  TRANSFER_TOPIC,
  transferRecipient
} from "./TransferLog"

/** Blocks read per `eth_getLogs` call. */
export const BLOCK_RANGE = 2000n

/** The next range after `cursor`, up to `head` and at most BLOCK_RANGE blocks; none when it is at the head. */
export const nextRange = (cursor: bigint, head: bigint): { from: bigint; to: bigint } | undefined => {
  const from = cursor + 1n
  if (from > head) return undefined
  return { from, to: from + BLOCK_RANGE - 1n < head ? from + BLOCK_RANGE - 1n : head }
}

/**
 * The token's `Transfer` logs of blocks `from`..`to`. The logs and block `to` come from one endpoint in one batch,
 * and count only if that endpoint has the block: a provider behind the head (or a load-balanced one whose node is)
 * answers an empty list for blocks it has not reached, which would move the cursor past payments.
 */
export const readRange = Effect.fn("ChainWatcher.readRange")(function* (
  chain: ChainAccess,
  token: Address,
  from: bigint,
  to: bigint
) {
  // Block numbers stay far below 2^53: compared as numbers, not bigints, for each log.
  const last = Number(to)
  const [logs] = yield* chainCall("eth_getLogs", () =>
    chain.together<readonly [ReadonlyArray<RawLog>, { hash: string } | null]>(
      [
        {
          method: "eth_getLogs",
          params: [{ address: token, topics: [TRANSFER_TOPIC], fromBlock: toHex(from), toBlock: toHex(to) }]
        },
        blockCall(to)
      ],
      ([found, block]) =>
        block !== null && found.every((log) => log.blockNumber === null || Number(log.blockNumber) <= last),
      `block ${to}`
    )
  )
  return logs
})

/** The recipient of each log that is a plain token transfer (undefined for the others), index for index. */
export const recipientsOf = (logs: ReadonlyArray<RawLog>): Array<Address | undefined> =>
  logs.map(transferRecipient)

/**
 * The credits among `logs`: those whose recipient is a watched address (lower-case address → request id), as the
 * recording statement's columns, with the blocks that hold them (number → hash).
 */
export const matchCredits = (
  logs: ReadonlyArray<RawLog>,
  recipients: ReadonlyArray<Address | undefined>,
  addresses: ReadonlyMap<string, string>
): { readonly credits: CreditColumns; readonly blocks: Map<string, string> } => {
  const credits = emptyCreditColumns()
  const blocks = new Map<string, string>()
  // A log a node lists twice is recorded once (the statement has no conflict clause to absorb it).
  const seen = new Set<string>()
  for (let i = 0; i < logs.length; i++) {
    const recipient = recipients[i]
    const requestId = recipient === undefined ? undefined : addresses.get(recipient)
    if (requestId === undefined) continue
    const log = logs[i]!
    const key = `${log.transactionHash}:${log.logIndex}`
    if (seen.has(key)) continue
    seen.add(key)
    // Recorded as the payer is shown (EIP-55); viem keeps recent checksums, so a repeat payer costs no hash.
    appendCredit(credits, log, requestId, getAddress)
    blocks.set(log.blockNumber!, log.blockHash!)
  }
  return { credits, blocks }
}
