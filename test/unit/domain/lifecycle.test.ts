import fc from "fast-check"
import { describe, expect, it } from "@effect/vitest"
import type { DepositRequestEvent, Emitted } from "../../../machines/DepositRequest"
import type { DepositRequestStatus } from "../../../services/domain/Lifecycle"
import { type Step, start, statusValues, step } from "../../../machines/step"

const WALLET = "0x1111111111111111111111111111111111111111"
const STRANGER = "0x2222222222222222222222222222222222222222"
const AT = "2026-11-22T12:00:00Z"

const fresh = (mode: "none" | "mailbox" | "merchant_session" = "none", amount = "100") =>
  start({
    id: "dr_test",
    amount_base_units: amount,
    payout_address: "0x3333333333333333333333333333333333333333",
    payer_policy_mode: mode,
    expires_at: "2026-11-23T12:00:00Z",
    created_at: AT
  })

/** Applies events in order, through a JSON round trip each time, as the actor host does. */
const run = (s: Step, ...events: Array<DepositRequestEvent>) => {
  const emitted: Array<Emitted> = []
  for (const e of events) {
    s = step(JSON.parse(JSON.stringify(s.snapshot)), e)
    emitted.push(...s.emitted)
  }
  return { s, emitted, types: emitted.map((e) => e.type) }
}

const attest = { type: "payer.wallet_attested", at: AT, wallet: WALLET, address: "0xaddr" } as const
const credit = (id: string, amount: string, from = WALLET) =>
  ({ type: "deposit.credited", at: AT, credit_id: id, amount_base_units: amount, from }) as const
const settled = { type: "settlement.confirmed", at: AT, tx_hash: "0xsettle", block_number: "10" } as const
const returned = (command_id: string) =>
  ({ type: "return.confirmed", at: AT, command_id, tx_hash: "0xreturn", block_number: "11" }) as const
const deadline = { type: "deadline.reached", at: AT } as const
const attention = {
  type: "attention.raised",
  at: AT,
  code: "transfer_reverted",
  message: "The settlement transfer reverted.",
  resolution: "Top up the treasury and resume."
} as const
const resume = { type: "operator.resumed", at: AT } as const

describe("the deposit request machine", () => {
  it("starts awaiting the payer, emitting nothing", () => {
    const s = fresh()
    expect(s.status).toBe("awaiting_payer")
    expect(s.emitted).toEqual([])
  })

  it("needs the proof before the wallet under a proof policy, and approves once", () => {
    const early = run(fresh("mailbox"), attest)
    expect(early.s.status).toBe("awaiting_payer")
    expect(early.types).toEqual([])
    const ok = run(
      fresh("mailbox"),
      { type: "payer.verified", at: AT, method: "mailbox" },
      { type: "payer.verified", at: AT, method: "mailbox" },
      attest
    )
    expect(ok.types).toEqual(["verification.approved", "deposit_request.ready"])
    expect(ok.s.status).toBe("ready")
    expect(ok.s.context.verification_completed_at).toBe(AT)
    expect(ok.s.context.payer_wallet).toBe(WALLET)
  })

  it("ignores a proof under the none policy", () => {
    expect(run(fresh("none"), { type: "payer.verified", at: AT, method: "mailbox" }).types).toEqual([])
  })

  it("settles exactly the amount on an exact payment", () => {
    const r = run(fresh(), attest, credit("c1", "100"), settled)
    expect(r.types).toEqual([
      "deposit_request.ready",
      "deposit_request.deposited",
      "settle",
      "deposit_request.settled"
    ])
    const settle = r.emitted.find((e) => e.type === "settle")
    expect(settle).toMatchObject({ amount_base_units: "100", command_id: "settle:dr_test" })
    expect(r.s.status).toBe("settled")
  })

  it("stays partially deposited until the sum reaches the amount, ignoring a repeated credit", () => {
    const r = run(fresh(), attest, credit("c1", "30"), credit("c1", "30"), credit("c2", "30"))
    expect(r.s.status).toBe("partially_deposited")
    expect(r.s.context.received_base_units).toBe("60")
    const done = run(r.s, credit("c3", "40"))
    expect(done.s.status).toBe("deposited")
  })

  it("returns an overpayment after settlement and stays settled", () => {
    const r = run(fresh(), attest, credit("c1", "150"), credit("c2", "7"), settled)
    const back = r.emitted.find((e) => e.type === "return")
    expect(back).toMatchObject({ amount_base_units: "57", reason: "overpayment", to: WALLET })
    const after = run(r.s, returned((back as { command_id: string }).command_id))
    expect(after.s.status).toBe("settled")
    expect(after.types).toEqual(["deposit_request.recovered_funds"])
    expect(after.s.context.recoveries[0]).toMatchObject({ amount_base_units: "57", reason: "overpayment" })
  })

  it("expires with nothing, or returns the whole partial balance and ends returned", () => {
    expect(run(fresh(), deadline).s.status).toBe("expired")
    const r = run(fresh(), attest, credit("c1", "40"), deadline)
    expect(r.s.status).toBe("expired")
    const back = r.emitted.find((e) => e.type === "return") as {
      command_id: string
      amount_base_units: string
    }
    expect(back.amount_base_units).toBe("40")
    const end = run(r.s, returned(back.command_id))
    expect(end.s.status).toBe("returned")
    expect(end.types).toEqual(["deposit_request.recovered_funds", "deposit_request.returned"])
  })

  it("ignores the deadline once funded", () => {
    expect(run(fresh(), attest, credit("c1", "100"), deadline).s.status).toBe("deposited")
  })

  it("returns a late transfer after settlement with its own recovery", () => {
    const r = run(fresh(), attest, credit("c1", "100"), settled, credit("late", "5"))
    const back = r.emitted.filter((e) => e.type === "return")
    expect(back).toHaveLength(1)
    expect(back[0]).toMatchObject({ amount_base_units: "5", reason: "late_transfer" })
  })

  it("marks funds first arriving from a stranger as likely unsolicited, once", () => {
    const r = run(fresh(), attest, credit("c1", "10", STRANGER), credit("c2", "10", STRANGER))
    expect(r.types.filter((t) => t === "deposit_request.likely_unsolicited")).toHaveLength(1)
    expect(r.s.context.likely_unsolicited_at).toBe(AT)
    expect(run(fresh(), attest, credit("c1", "10")).s.context.likely_unsolicited_at).toBeNull()
  })

  it("pauses on attention, raises needs_attention once, and resumes where it was with a retry", () => {
    const r = run(fresh(), attest, credit("c1", "100"), attention, attention)
    expect(r.s.status).toBe("needs_attention")
    expect(r.types.filter((t) => t === "deposit_request.needs_attention")).toHaveLength(1)
    expect(r.s.context.attention).toMatchObject({ code: "transfer_reverted", since: AT })
    const back = run(r.s, resume)
    expect(back.s.status).toBe("deposited")
    expect(back.emitted).toEqual([{ kind: "command", type: "retry", command_id: "settle:dr_test" }])
    expect(back.s.context.attention).toBeNull()
    // a later attention raises no second event
    expect(run(back.s, attention).types).toEqual([])
  })

  it("records credits while paused and acts on them only on resume", () => {
    const paused = run(fresh(), attest, attention, credit("c1", "100"))
    expect(paused.types).not.toContain("settle")
    expect(paused.s.context.received_base_units).toBe("100")
    expect(run(paused.s, resume).s.status).toBe("deposited")
  })
})

// Property: random event sequences never break the invariants.
const eventArb: fc.Arbitrary<DepositRequestEvent> = fc.oneof(
  fc.constant({ type: "payer.verified", at: AT, method: "mailbox" } as const),
  fc.constant(attest),
  fc.record({
    type: fc.constant("deposit.credited" as const),
    at: fc.constant(AT),
    credit_id: fc.constantFrom("c1", "c2", "c3", "c4", "c5", "c6"),
    amount_base_units: fc.bigInt({ min: 1n, max: 200n }).map(String),
    from: fc.constantFrom(WALLET, STRANGER)
  }),
  fc.constant(settled),
  fc.constantFrom(
    returned("return:dr_test:overpayment:remainder"),
    returned("return:dr_test:expired_balance:balance"),
    returned("return:dr_test:late_transfer:c3"),
    returned("return:dr_test:late_transfer:c4")
  ),
  fc.constant(deadline),
  fc.constant(attention),
  fc.constant(resume)
)

const onceTypes = [
  "deposit_request.deposited",
  "deposit_request.settled",
  "deposit_request.expired",
  "deposit_request.returned",
  "deposit_request.needs_attention",
  "deposit_request.ready",
  "verification.approved",
  "deposit_request.likely_unsolicited"
]

describe("invariants under random event sequences", () => {
  it("hold for every sequence", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("none", "mailbox") as fc.Arbitrary<"none" | "mailbox">,
        fc.array(eventArb, { maxLength: 40 }),
        (mode, events) => {
          let s = fresh(mode)
          const emitted: Array<Emitted> = []
          let received = 0n
          for (const e of events) {
            s = step(JSON.parse(JSON.stringify(s.snapshot)), e)
            emitted.push(...s.emitted)
            const now = BigInt(s.context.received_base_units)
            expect(now >= received).toBe(true)
            received = now
            expect(statusValues).toContain(s.status as DepositRequestStatus)
          }
          for (const type of onceTypes)
            expect(emitted.filter((e) => e.type === type).length).toBeLessThanOrEqual(1)
          const settles = emitted.filter((e) => e.type === "settle")
          expect(settles.length).toBeLessThanOrEqual(1)
          for (const x of settles) expect((x as { amount_base_units: string }).amount_base_units).toBe("100")
          const returnedSum = emitted
            .filter((e) => e.type === "return")
            .reduce((sum, e) => sum + BigInt((e as { amount_base_units: string }).amount_base_units), 0n)
          const settledSum = settles.length > 0 ? 100n : 0n
          expect(settledSum + returnedSum <= received).toBe(true)
          // each return command id is issued once
          const ids = emitted
            .filter((e) => e.type === "return")
            .map((e) => (e as { command_id: string }).command_id)
          expect(new Set(ids).size).toBe(ids.length)
          // settled is never left for anything but attention
          if (emitted.some((e) => e.type === "deposit_request.settled")) {
            expect(["settled", "needs_attention"]).toContain(s.status)
          }
        }
      ),
      { numRuns: 500 }
    )
  })

  it("round-trips a persisted snapshot through JSON to the same state", () => {
    const r = run(fresh(), attest, credit("c1", "40"))
    const again = step(JSON.parse(JSON.stringify(r.s.snapshot)), credit("c1", "40"))
    expect(again.status).toBe(r.s.status)
    expect(again.context).toEqual(r.s.context)
  })
})
