import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { decodeCreditMessage } from "../../../services/chain/CreditConsumer"
import type { StreamMessage } from "../../../services/platform/eventStream/EventStream"
import { decodeJobMessage } from "../../../services/webhooks/WebhookDispatcher"

// Stream messages are decoded where they enter their room, one schema per kind: a message its schema refuses is
// termed once (never acked, never offered again), and one it takes is left for its handler to settle.

interface Settled {
  readonly calls: Array<string>
  readonly message: StreamMessage
}

const messageOf = (data: string, seq = 7): Settled => {
  const calls: Array<string> = []
  return {
    calls,
    message: {
      subject: "test",
      data,
      seq,
      deliveries: 1,
      ack: () => calls.push("ack"),
      nak: () => calls.push("nak"),
      term: () => calls.push("term"),
      working: () => calls.push("working")
    }
  }
}

const credit = {
  kind: "credit",
  chain_id: 31337,
  tx_hash: "0xabc",
  log_index: 2,
  deposit_request_id: "0190b1a4-0000-7000-8000-000000000000",
  from_address: "0x0000000000000000000000000000000000000001",
  amount_base_units: "1000000",
  seen_at: "2026-01-01T00:00:00.000Z"
}
const reorg = {
  kind: "reorg",
  chain_id: 31337,
  tx_hash: "0xabc",
  log_index: 2,
  deposit_request_id: "0190b1a4-0000-7000-8000-000000000000",
  block_number: "12",
  reorged_at: "2026-01-01T00:00:01.000Z"
}

const deeplyNested = `{"job_id":${"[".repeat(20_000)}${"]".repeat(20_000)},"endpoint_id":"e","publication":1}`

describe("stream messages decoded at the edge", () => {
  it.effect("a webhook job's message is taken as its schema says, and left to its handler", () =>
    Effect.gen(function* () {
      const { calls, message } = messageOf(JSON.stringify({ job_id: "j", endpoint_id: "e", publication: 3 }))
      const decoded = yield* decodeJobMessage(message)
      assert.deepStrictEqual(decoded, Option.some({ job_id: "j", endpoint_id: "e", publication: 3 }))
      assert.deepStrictEqual(calls, [])
    })
  )

  it.effect("a malformed webhook job's message is refused by its schema and termed once", () =>
    Effect.gen(function* () {
      for (const data of [
        "not json",
        "null",
        "[]",
        JSON.stringify({ job_id: "j", endpoint_id: "e" }),
        JSON.stringify({ job_id: "j", endpoint_id: "e", publication: 1.5 }),
        JSON.stringify({ job_id: 1, endpoint_id: "e", publication: 1 }),
        deeplyNested
      ]) {
        const { calls, message } = messageOf(data)
        const decoded = yield* decodeJobMessage(message)
        assert.isTrue(Option.isNone(decoded), data.slice(0, 60))
        assert.deepStrictEqual(calls, ["term"], data.slice(0, 60))
      }
    })
  )

  it.effect("a credit and a reorg notice are taken as their schema says", () =>
    Effect.gen(function* () {
      for (const body of [credit, reorg]) {
        const { calls, message } = messageOf(JSON.stringify(body))
        assert.deepStrictEqual(yield* decodeCreditMessage(message), Option.some(body))
        assert.deepStrictEqual(calls, [])
      }
    })
  )

  it.effect("a malformed credits message is refused by its schema and termed once", () =>
    Effect.gen(function* () {
      for (const data of [
        "{",
        JSON.stringify({ ...credit, kind: "refund" }),
        JSON.stringify({ ...credit, amount_base_units: 1_000_000 }),
        JSON.stringify({ kind: "reorg", deposit_request_id: credit.deposit_request_id }),
        JSON.stringify({ ...credit, log_index: "2" })
      ]) {
        const { calls, message } = messageOf(data)
        assert.isTrue(Option.isNone(yield* decodeCreditMessage(message)), data.slice(0, 60))
        assert.deepStrictEqual(calls, ["term"], data.slice(0, 60))
      }
    })
  )
})
