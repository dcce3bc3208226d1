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

const addressOfTopic = (topic: Hex): Address => `0x${topic.slice(26).toLowerCase()}`

/**
 * Whether a log is an ERC-20 `Transfer` final enough to count: the layout is fixed (two indexed addresses, one
 * 32-byte word). Anything else (another event, a pending or removed log, an ERC-721 `Transfer` with the value
 * indexed) is not a payment to us.
 */
const isFungibleTransfer = (log: RawLog): boolean =>
  log.topics.length === 3 &&
  log.topics[0] === TRANSFER_TOPIC &&
  log.data.length === 66 &&
  log.removed !== true &&
  log.transactionHash !== null &&
  log.logIndex !== null &&
  log.blockNumber !== null &&
  log.blockHash !== null

/**
 * The recipient of an ERC-20 `Transfer` log (lower-case, as on the wire), read straight from its wire form (a
 * slice instead of viem's general ABI decoder, which was most of the watcher's per-block time), or `undefined`
 * when it is not one.
 */
export const transferRecipient = (log: RawLog): Address | undefined =>
  isFungibleTransfer(log) ? addressOfTopic(log.topics[2]!) : undefined

/**
 * Recorded credits as the watcher's statement takes them, one array per column, filled straight from the logs
 * (no object per credit; amounts and block numbers as decimal text, the payer as the caller spells it).
 */
export interface CreditColumns {
  readonly txHash: Array<string>
  readonly logIndex: Array<number>
  readonly blockNumber: Array<string>
  readonly blockHash: Array<string>
  readonly requestId: Array<string>
  readonly from: Array<string>
  readonly value: Array<string>
}

export const emptyCreditColumns = (): CreditColumns => ({
  txHash: [],
  logIndex: [],
  blockNumber: [],
  blockHash: [],
  requestId: [],
  from: [],
  value: []
})

const ZERO_HIGH_WORDS = "0".repeat(51)

/** A 32-byte word as decimal text; words under 2^52 (every real token amount) without a bigint. */
const wordToDecimal = (data: Hex): string =>
  data.startsWith(ZERO_HIGH_WORDS, 2) ? String(Number.parseInt(data.slice(53), 16)) : BigInt(data).toString()

/**
 * Appends a log that `transferRecipient` accepted as one credit to `requestId`; `spell` gives the payer's address
 * as recorded (the watcher checksums it).
 */
export const appendCredit = (
  columns: CreditColumns,
  log: RawLog,
  requestId: string,
  spell: (from: Address) => string
): void => {
  columns.txHash.push(log.transactionHash!)
  columns.logIndex.push(Number(log.logIndex))
  // Block numbers stay far below 2^53.
  columns.blockNumber.push(String(Number(log.blockNumber)))
  columns.blockHash.push(log.blockHash!)
  columns.requestId.push(requestId)
  columns.from.push(spell(addressOfTopic(log.topics[1]!)))
  columns.value.push(wordToDecimal(log.data))
}
