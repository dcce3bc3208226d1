import { assert, describe, it } from "@effect/vitest"
import { step } from "../../../machines/step"
import { snapshotOf } from "../../../services/actors/ActorRow"
import { decideFirstStep } from "../../../services/depositRequests/CreateDecide"
import {
  type CreateInput,
  DEFAULT_TTL_MS,
  deadlineOf,
  fieldRuleError,
  fingerprintOf,
  referenceError
} from "../../../services/depositRequests/CreateFields"
import {
  lifecycleBodiesOf,
  lifecycleFactsOf,
  recoveryWire,
  toWire,
  viewOf,
  webhookSubset
} from "../../../services/depositRequests/DepositRequestWire"
import { InvalidRequest, InvalidState, NotFound } from "../../../services/domain/Errors"
import { formatTimestamp } from "../../../services/domain/Timestamp"

/** The create's phases, each alone, and the lifecycle bodies the actor host gets through its port. No database. */
const now = new Date("2026-11-25T12:00:00Z")
const UUID = "0193a0c0-0000-7000-8000-000000000001"
const ACCOUNT = "0193a0c0-0000-7000-8000-0000000000aa"
const PAYOUT = "0x52908400098527886E0F7030069857D2E4169EE7"
const input = {
  amount: 12_500_000n,
  issuer_id: "iss_0193a0c0-0000-7000-8000-0000000000bb",
  payout_address_id: "pa_0193a0c0-0000-7000-8000-0000000000cc"
}
const refs = {
  issuer: true,
  payout_address: PAYOUT,
  payout_disabled: false,
  payout_held_until: null,
  customer: false
}

/** Both validations, in the create's order: the field rules, then the deadline at `now`. */
const checkFields = (fields: CreateInput, at: Date, allowLocalShop: boolean) =>
  fieldRuleError(fields, allowLocalShop) ?? deadlineOf(fields, at)

describe("create: validate", () => {
  it("answers the deadline of valid fields, the default one when none is given", () => {
    const expiresAt = checkFields(input, now, false)
    assert.instanceOf(expiresAt, Date)
    assert.strictEqual((expiresAt as Date).getTime(), now.getTime() + DEFAULT_TTL_MS)
  })

  it("refuses each field rule with the parameter to fix", () => {
    const refused = (fields: Parameters<typeof checkFields>[0], allowLocalShop = false) => {
      const outcome = checkFields(fields, now, allowLocalShop)
      assert.instanceOf(outcome, InvalidRequest)
      return (outcome as InvalidRequest).param
    }
    assert.strictEqual(refused({ ...input, amount: 0n }), "amount")
    assert.strictEqual(refused({ ...input, amount: 10n ** 18n + 1n }), "amount")
    assert.strictEqual(refused({ ...input, payer_policy_mode: "mailbox" }), "expected_email")
    assert.strictEqual(refused({ ...input, expected_email: "a@example.com" }), "expected_email")
    assert.strictEqual(refused({ ...input, payer_reference: "r" }), "payer_reference")
    assert.strictEqual(refused({ ...input, expires_at: new Date(now.getTime() + 60_000) }), "expires_at")
  })

  it("takes an absolute https return_url up to 2,048 characters, and local shops over http in the sandbox", () => {
    const long = `https://shop.example.com/${"a".repeat(2048 - "https://shop.example.com/".length)}`
    assert.lengthOf(long, 2048)
    for (const [url, sandbox] of [
      ["https://shop.example.com/orders/4711?done=1", false],
      [long, false],
      ["http://localhost:3000/thanks", true],
      ["http://127.0.0.1:8080/thanks", true],
      ["https://shop.example.com/back", true]
    ] as const) {
      assert.instanceOf(checkFields({ ...input, return_url: url }, now, sandbox), Date, url)
    }
  })

  it("refuses a return_url that is not an absolute https URL, or too long, naming return_url", () => {
    const refused = (url: string, sandbox: boolean) => {
      const outcome = checkFields({ ...input, return_url: url }, now, sandbox)
      assert.instanceOf(outcome, InvalidRequest, url)
      return (outcome as InvalidRequest).param
    }
    for (const sandbox of [false, true]) {
      assert.strictEqual(refused("http://example.com/back", sandbox), "return_url")
      assert.strictEqual(refused("ftp://shop.example.com/back", sandbox), "return_url")
      assert.strictEqual(refused("javascript:alert(1)", sandbox), "return_url")
      assert.strictEqual(refused("/orders/4711", sandbox), "return_url")
      assert.strictEqual(refused("https://user:pw@shop.example.com/", sandbox), "return_url")
      assert.strictEqual(refused(`https://shop.example.com/${"a".repeat(2048)}`, sandbox), "return_url")
    }
    // Local shops are the sandbox's only: production-like rules refuse them.
    assert.strictEqual(refused("http://localhost:3000/thanks", false), "return_url")
    assert.strictEqual(refused("http://127.0.0.1:8080/thanks", false), "return_url")
  })

  it("counts return_url among the immutable fields a replay must repeat", () => {
    const a = fingerprintOf({ ...input, return_url: "https://shop.example.com/a" })
    assert.notStrictEqual(a, fingerprintOf({ ...input, return_url: "https://shop.example.com/b" }))
    assert.notStrictEqual(a, fingerprintOf(input))
    assert.strictEqual(a, fingerprintOf({ ...input, return_url: "https://shop.example.com/a" }))
  })

  it("names the reference a merchant must fix", () => {
    assert.isUndefined(referenceError(refs, input, now))
    assert.instanceOf(referenceError({ ...refs, issuer: false }, input, now), NotFound)
    assert.instanceOf(referenceError({ ...refs, payout_address: null }, input, now), NotFound)
    assert.instanceOf(referenceError({ ...refs, payout_disabled: true }, input, now), InvalidRequest)
    assert.instanceOf(referenceError(refs, { ...input, customer_id: "cus_x" }, now), NotFound)
    // A payout address in its hold is refused with the time it is released; at that time it is taken.
    const held = referenceError({ ...refs, payout_held_until: new Date(now.getTime() + 60_000) }, input, now)
    assert.instanceOf(held, InvalidState)
    assert.include(held!.message, formatTimestamp(new Date(now.getTime() + 60_000)))
    assert.isUndefined(referenceError({ ...refs, payout_held_until: now }, input, now))
  })

  it("fingerprints the immutable fields only", () => {
    assert.strictEqual(
      fingerprintOf(input),
      fingerprintOf({ ...input, heading: "changed", metadata: { a: "b" } })
    )
    assert.notStrictEqual(fingerprintOf(input), fingerprintOf({ ...input, amount: 1n }))
  })
})

describe("create: decide", () => {
  it("makes the first step and its row without emitting anything", () => {
    const expiresAt = new Date(now.getTime() + DEFAULT_TTL_MS)
    const { row, step: s } = decideFirstStep(
      UUID,
      ACCOUNT,
      { ...input, heading: "h" },
      now,
      expiresAt,
      PAYOUT
    )
    assert.strictEqual(s.emitted.length, 0)
    assert.strictEqual(row.id, UUID)
    assert.strictEqual(row.account_id, ACCOUNT)
    assert.strictEqual(row.version, "1")
    assert.strictEqual(row.status, s.status)
    assert.strictEqual(row.snapshot, s.snapshot)
    assert.strictEqual(row.heading, "h")
    assert.strictEqual(row.issuer_id, "0193a0c0-0000-7000-8000-0000000000bb")
    assert.strictEqual(row.expires_at, expiresAt)
    assert.strictEqual(s.context.payout_address, PAYOUT)
    assert.strictEqual(s.context.id, `dr_${UUID}`)
  })
})

describe("lifecycle bodies", () => {
  it("are the webhook envelope around the step's webhook fields, byte for byte", () => {
    const { row: first } = decideFirstStep(
      UUID,
      ACCOUNT,
      input,
      now,
      new Date(now.getTime() + DEFAULT_TTL_MS),
      PAYOUT
    )
    const s = step(first.snapshot, {
      type: "payer.wallet_attested",
      at: now.toISOString(),
      wallet: "0x1111111111111111111111111111111111111111",
      address: "0x2222222222222222222222222222222222222222"
    })
    const row = { ...first, status: s.status, snapshot: s.snapshot, version: "2" }
    const recovery = {
      id: "0193a0c0-0000-7000-8000-0000000000dd",
      amount_base_units: "5",
      reason: "late_transfer" as const,
      transaction_hash: "0xab",
      block_number: "7",
      recovered_at: now.toISOString()
    }
    const bodyOf = lifecycleBodiesOf(1, "https://pay.example")(row, s)
    const event = {
      kind: "lifecycle",
      type: "deposit_request.recovered_funds",
      dedupe: "x",
      recovery
    } as const
    const subset = webhookSubset(toWire(row, lifecycleFactsOf(s), 1, "https://pay.example"))
    assert.strictEqual(
      bodyOf("0193a0c0-0000-7000-8000-0000000000ee", event, now),
      JSON.stringify({
        id: "evt_0193a0c0-0000-7000-8000-0000000000ee",
        type: "deposit_request.recovered_funds",
        occurred_at: "2026-11-25T12:00:00Z",
        data: { deposit_request: subset, recovery: recoveryWire(recovery) }
      })
    )
    const { recovery: _, ...plain } = event
    assert.strictEqual(
      bodyOf("0193a0c0-0000-7000-8000-0000000000ee", { ...plain, type: "deposit_request.expired" }, now),
      JSON.stringify({
        id: "evt_0193a0c0-0000-7000-8000-0000000000ee",
        type: "deposit_request.expired",
        occurred_at: "2026-11-25T12:00:00Z",
        data: { deposit_request: subset }
      })
    )
    // A stored row's view reads the same facts back from its snapshot.
    assert.deepStrictEqual(
      viewOf(row, 1, "https://pay.example"),
      toWire(row, lifecycleFactsOf(s), 1, "https://pay.example")
    )
    assert.strictEqual(snapshotOf(row).status, s.status)
  })
})
