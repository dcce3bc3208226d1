import { type Address, type Hex, toEventSelector } from "viem"

/** `Transfer(address indexed from, address indexed to, uint256 value)`: the only log the watcher reads. */
export const TRANSFER_TOPIC = toEventSelector("Transfer(address,address,uint256)")

/** A log as `eth_getLogs` returns it on the wire (hex quantities, lower-case hex data). */
export interface RawLog {
  readonly transactionHash: Hex | null
  readonly logIndex: Hex | null
  readonly blockNumber: Hex | null
  readonly blockHash: Hex | null
  readonly topics: ReadonlyArray<Hex>
  readonly data: Hex
  readonly removed?: boolean
}

export interface TransferLog {
  readonly txHash: Hex
  readonly logIndex: number
  readonly blockNumber: bigint
  readonly blockHash: Hex
  /** Lower-case, as on the wire; the caller checksums only what it keeps. */
  readonly from: Address
  readonly to: Address
  readonly value: bigint
}

const addressOfTopic = (topic: Hex): Address => `0x${topic.slice(26).toLowerCase()}`

/**
 * Decodes an ERC-20 `Transfer` log straight from its wire form. The layout is fixed (two indexed addresses, one
 * 32-byte word), so this is three slices instead of viem's general ABI decoder, which was most of the watcher's
 * per-block time at 500 transfers a block. Anything else (another event, a pending or removed log, an ERC-721
 * `Transfer` with the value indexed) is `undefined`: it is not a payment to us.
 */
export const decodeTransferLog = (log: RawLog): TransferLog | undefined => {
  const [topic, from, to] = log.topics
  if (
    topic !== TRANSFER_TOPIC ||
    from === undefined ||
    to === undefined ||
    log.topics.length !== 3 ||
    log.data.length !== 66 ||
    log.removed === true ||
    log.transactionHash === null ||
    log.logIndex === null ||
    log.blockNumber === null ||
    log.blockHash === null
  )
    return undefined
  return {
    txHash: log.transactionHash,
    logIndex: Number(log.logIndex),
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash,
    from: addressOfTopic(from),
    to: addressOfTopic(to),
    value: BigInt(log.data)
  }
}
