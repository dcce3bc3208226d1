import fc from "fast-check"
import {
  type Hex,
  decodeEventLog,
  getAddress,
  encodeAbiParameters,
  encodeEventTopics,
  parseAbiItem,
  toHex
} from "viem"
import { describe, expect, it } from "vitest"
import {
  appendCredit,
  emptyCreditColumns,
  type RawLog,
  TRANSFER_TOPIC,
  transferRecipient
} from "../../../services/chain/TransferLog"

const transfer = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => toHex(b))
const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => toHex(b))
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n })

const rawTransfer = (from: Hex, to: Hex, value: bigint, txHash: Hex, logIndex: number): RawLog => ({
  transactionHash: txHash,
  logIndex: toHex(logIndex),
  blockNumber: "0x2a",
  blockHash: `0x${"ab".repeat(32)}`,
  topics: encodeEventTopics({ abi: [transfer], eventName: "Transfer", args: { from, to } }) as Array<Hex>,
  data: encodeAbiParameters([{ type: "uint256" }], [value])
})

describe("transferRecipient and appendCredit", () => {
  // Amounts around the decoder's bigint-free range (below 2^52) as well as anywhere in uint256.
  const amount = fc.oneof(
    fc.bigInt({ min: 0n, max: 2n ** 52n + 16n }),
    fc.bigInt({ min: 2n ** 52n - 16n, max: 2n ** 52n + 16n }),
    uint256
  )

  it("agree with viem's ABI decoder on every Transfer log", () => {
    fc.assert(
      fc.property(
        address,
        address,
        amount,
        hash,
        fc.nat({ max: 10_000 }),
        fc.nat({ max: 2 ** 40 }),
        (from, to, value, txHash, index, block) => {
          const raw = { ...rawTransfer(from, to, value, txHash, index), blockNumber: toHex(block) }
          const viems = decodeEventLog({
            abi: [transfer],
            data: raw.data,
            topics: raw.topics as [Hex, ...Array<Hex>]
          })
          expect(transferRecipient(raw)).toBe(viems.args.to.toLowerCase())
          const columns = emptyCreditColumns()
          appendCredit(columns, raw, "request", getAddress)
          expect(columns).toEqual({
            txHash: [txHash],
            logIndex: [index],
            blockNumber: [String(block)],
            blockHash: [raw.blockHash],
            requestId: ["request"],
            from: [viems.args.from],
            value: [viems.args.value.toString()]
          })
        }
      )
    )
  })

  it("refuse what is not a fungible transfer to us", () => {
    const good = rawTransfer(`0x${"11".repeat(20)}`, `0x${"22".repeat(20)}`, 5n, `0x${"33".repeat(32)}`, 0)
    expect(good.topics[0]).toBe(TRANSFER_TOPIC)
    expect(transferRecipient(good)).toBe(`0x${"22".repeat(20)}`)
    const refused: Array<RawLog> = [
      // An ERC-721 Transfer has the same topic with the token id indexed and no data.
      { ...good, topics: [...good.topics, good.data], data: "0x" },
      { ...good, topics: [`0x${"00".repeat(32)}`, ...good.topics.slice(1)] },
      { ...good, topics: good.topics.slice(0, 2) },
      { ...good, removed: true },
      { ...good, blockHash: null },
      { ...good, blockNumber: null },
      { ...good, logIndex: null },
      { ...good, transactionHash: null },
      { ...good, data: `${good.data}00` as Hex }
    ]
    for (const log of refused) expect(transferRecipient(log)).toBeUndefined()
  })
})
