import fc from "fast-check"
import { type Hex, decodeEventLog, encodeAbiParameters, encodeEventTopics, parseAbiItem, toHex } from "viem"
import { describe, expect, it } from "vitest"
import { decodeTransferLog, type RawLog, TRANSFER_TOPIC } from "../../services/TransferLog"

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

describe("decodeTransferLog", () => {
  it("agrees with viem's ABI decoder on every Transfer log", () => {
    fc.assert(
      fc.property(
        address,
        address,
        uint256,
        hash,
        fc.nat({ max: 10_000 }),
        (from, to, value, txHash, index) => {
          const raw = rawTransfer(from, to, value, txHash, index)
          const ours = decodeTransferLog(raw)
          const viems = decodeEventLog({
            abi: [transfer],
            data: raw.data,
            topics: raw.topics as [Hex, ...Array<Hex>]
          })
          expect(ours).toEqual({
            txHash,
            logIndex: index,
            blockNumber: 42n,
            blockHash: raw.blockHash,
            from: viems.args.from.toLowerCase(),
            to: viems.args.to.toLowerCase(),
            value: viems.args.value
          })
        }
      )
    )
  })

  it("refuses what is not a fungible transfer to us", () => {
    const good = rawTransfer(`0x${"11".repeat(20)}`, `0x${"22".repeat(20)}`, 5n, `0x${"33".repeat(32)}`, 0)
    expect(decodeTransferLog(good)?.value).toBe(5n)
    // An ERC-721 Transfer has the same topic with the token id indexed and no data.
    expect(decodeTransferLog({ ...good, topics: [...good.topics, good.data], data: "0x" })).toBeUndefined()
    expect(
      decodeTransferLog({ ...good, topics: [`0x${"00".repeat(32)}`, ...good.topics.slice(1)] })
    ).toBeUndefined()
    expect(decodeTransferLog({ ...good, removed: true })).toBeUndefined()
    expect(decodeTransferLog({ ...good, blockHash: null })).toBeUndefined()
    expect(decodeTransferLog({ ...good, data: `${good.data}00` as Hex })).toBeUndefined()
    expect(good.topics[0]).toBe(TRANSFER_TOPIC)
  })
})
