import fc from "fast-check"
import { describe, expect, it } from "@effect/vitest"
import { transition } from "xstate"
import {
  type Command,
  type DepositRequestEvent,
  depositRequestMachine,
  type Emitted,
  type LifecycleEvent,
  MACHINE_VERSION
} from "../../../machines/DepositRequest"
import type { DepositRequestStatus, PayerPolicyMode } from "../../../services/domain/Lifecycle"
import { type Step, start, startByXState, statusValues, step, transitionTable } from "../../../machines/step"

const ID = "dr_test"
const AMOUNT = "100000000"
const WALLET = "0x1111111111111111111111111111111111111111"
const STRANGER = "0x2222222222222222222222222222222222222222"
const PAYOUT = "0x3333333333333333333333333333333333333333"
const DEPOSIT = "0x4444444444444444444444444444444444444444"
const T0 = "2026-11-22T12:00:00Z"
const T1 = "2026-11-22T12:05:00Z"
const T2 = "2026-11-22T12:10:00Z"

const fresh = (mode: PayerPolicyMode = "none", amount = AMOUNT) =>
  start({
    id: ID,
    amount_base_units: amount,
    payout_address: PAYOUT,
    payer_policy_mode: mode,
    expires_at: "2026-11-23T12:00:00Z",
    created_at: T0
  })

const verified = (method: "mailbox" | "merchant_session" = "mailbox", at = T0): DepositRequestEvent => ({
  type: "payer.verified",
  at,
  method
})
const attest = (wallet = WALLET, at = T0): DepositRequestEvent => ({
  type: "payer.wallet_attested",
  at,
  wallet,
  address: DEPOSIT
})
const credit = (credit_id: string, amount: string, from = WALLET, at = T1): DepositRequestEvent => ({
  type: "deposit.credited",
  at,
  credit_id,
  amount_base_units: amount,
  from
})
const settlement = (at = T2): DepositRequestEvent => ({
  type: "settlement.confirmed",
  at,
  tx_hash: "0xsettle",
  block_number: "10"
})
const returned = (command_id: string, at = T2): DepositRequestEvent => ({
  type: "return.confirmed",
  at,
  command_id,
  tx_hash: `0xreturn-${command_id}`,
  block_number: "11"
})
const deadline = (at = T1): DepositRequestEvent => ({ type: "deadline.reached", at })
const attention = (code = "transfer_reverted", at = T1): DepositRequestEvent => ({
  type: "attention.raised",
  at,
  code,
  message: `The treasury reported ${code}.`,
  resolution: "Fix the cause, then resume the request."
})
const resume = (at = T2): DepositRequestEvent => ({ type: "operator.resumed", at })
const cancelled = (reason: string | null = "The order was changed.", at = T1): DepositRequestEvent => ({
  type: "merchant.cancelled",
  at,
  reason
})

/** One step as the actor host takes it: from the stored JSON. */
const next = (s: Step, e: DepositRequestEvent) => step(JSON.parse(JSON.stringify(s.snapshot)), e)

const run = (s: Step, ...events: ReadonlyArray<DepositRequestEvent>) => {
  const emitted: Array<Emitted> = []
  for (const e of events) {
    s = next(s, e)
    emitted.push(...s.emitted)
  }
  return { s, emitted, types: emitted.map((e) => e.type) }
}

const commands = (emitted: ReadonlyArray<Emitted>) =>
  emitted.filter((e): e is Command => e.kind === "command")
const returnsOf = (emitted: ReadonlyArray<Emitted>) =>
  commands(emitted).filter((c): c is Extract<Command, { type: "return" }> => c.type === "return")
const lifecycleOf = (emitted: ReadonlyArray<Emitted>) =>
  emitted.filter((e): e is LifecycleEvent => e.kind === "lifecycle")

// Every transition the table lists must be taken by some test below (checked last in this file).
const covered = new Set<string>()
const keyOf = (r: { from: string; event: string; to: string; guard?: string | undefined }) =>
  `${r.from} --${r.event}${r.guard ? ` [${r.guard}]` : ""}--> ${r.to}`

/** Takes one transition the test names (from the current status, by event, guard and target) and checks it. */
const via = (s: Step, e: DepositRequestEvent, expected: { to: DepositRequestStatus; guard?: string }) => {
  const row = { from: s.status, event: e.type, to: expected.to, guard: expected.guard }
  expect(transitionTable().map(keyOf)).toContain(keyOf(row))
  covered.add(keyOf(row))
  const after = next(s, e)
  expect(after.status).toBe(expected.to)
  return after
}

/** The event is not taken: nothing changes and nothing is emitted. */
const ignored = (s: Step, e: DepositRequestEvent) => {
  const after = next(s, e)
  expect(after.emitted).toEqual([])
  expect(after.status).toBe(s.status)
  expect(after.context).toEqual(s.context)
  return after
}

const ready = () => run(fresh(), attest()).s
const partial = (amount = "40000000") => run(ready(), credit("c1", amount)).s
const deposited = (amount = AMOUNT) => run(ready(), credit("c1", amount)).s
const settled = (amount = AMOUNT) => run(deposited(amount), settlement()).s

describe("awaiting_payer", () => {
  it("is where a request starts, with every fact empty and nothing emitted", () => {
    const s = fresh()
    expect(MACHINE_VERSION).toBe(1)
    expect(s.status).toBe("awaiting_payer")
    expect(s.emitted).toEqual([])
    expect(s.context).toMatchObject({
      received_base_units: "0",
      likely_unsolicited_at: null,
      verification_completed_at: null,
      payer_wallet: null,
      address: null,
      wallet_bound_at: null,
      settlement: null,
      attention: null,
      recoveries: [],
      pending: []
    })
  })

  it("approves the proof its policy asks for, once", () => {
    const s = via(fresh("mailbox"), verified("mailbox"), {
      to: "awaiting_payer",
      guard: "policyProofSatisfied"
    })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "verification.approved", dedupe: "verification.approved" }
    ])
    expect(s.context.verification_completed_at).toBe(T0)
    ignored(s, verified("mailbox", T1))
    const session = via(fresh("merchant_session"), verified("merchant_session"), {
      to: "awaiting_payer",
      guard: "policyProofSatisfied"
    })
    expect(session.emitted.map((e) => e.type)).toEqual(["verification.approved"])
  })

  it("ignores a proof the policy does not ask for", () => {
    ignored(fresh("none"), verified("mailbox"))
    ignored(fresh("mailbox"), verified("merchant_session"))
    ignored(fresh("merchant_session"), verified("mailbox"))
  })

  it("releases the address on a wallet attestation once the policy is satisfied", () => {
    const s = via(fresh("none"), attest(), { to: "ready", guard: "payerVerified" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.ready", dedupe: "deposit_request.ready" }
    ])
    expect(s.context).toMatchObject({ payer_wallet: WALLET, address: DEPOSIT, wallet_bound_at: T0 })
    const proven = run(fresh("mailbox"), verified("mailbox")).s
    expect(via(proven, attest(), { to: "ready", guard: "payerVerified" }).context.payer_wallet).toBe(WALLET)
  })

  it("refuses a wallet attestation before the proof", () => {
    ignored(fresh("mailbox"), attest())
    ignored(fresh("merchant_session"), attest())
  })

  it("expires at the deadline with nothing to return", () => {
    const s = via(fresh(), deadline(), { to: "expired" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.expired", dedupe: "deposit_request.expired" }
    ])
  })

  it("expires at once when the merchant cancels it, keeping the reason", () => {
    const s = via(fresh(), cancelled(), { to: "expired" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.expired", dedupe: "deposit_request.expired" }
    ])
    expect(s.context.cancellation).toEqual({ at: T1, reason: "The order was changed." })
    // Its deadline later changes nothing.
    ignored(s, deadline(T2))
  })

  it("has nothing to pause and no address to credit", () => {
    ignored(fresh(), attention())
    ignored(fresh(), credit("c1", AMOUNT))
    ignored(fresh(), settlement())
    ignored(fresh(), resume())
  })
})

describe("ready", () => {
  it("queues settlement of exactly the amount when one credit funds the request", () => {
    const s = via(ready(), credit("c1", AMOUNT), { to: "deposited", guard: "newCreditFundsRequest" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.deposited", dedupe: "deposit_request.deposited" },
      { kind: "command", type: "settle", command_id: `settle:${ID}`, amount_base_units: AMOUNT, to: PAYOUT }
    ])
    expect(s.context.received_base_units).toBe(AMOUNT)
  })

  it("settles exactly the amount even when the first credit is larger", () => {
    const s = via(ready(), credit("c1", "250000000"), { to: "deposited", guard: "newCreditFundsRequest" })
    expect(commands(s.emitted)).toEqual([
      { kind: "command", type: "settle", command_id: `settle:${ID}`, amount_base_units: AMOUNT, to: PAYOUT }
    ])
  })

  it("is partially deposited after a credit below the amount", () => {
    const s = via(ready(), credit("c1", "1"), { to: "partially_deposited", guard: "newCredit" })
    expect(s.emitted).toEqual([])
    expect(s.context.received_base_units).toBe("1")
  })

  it("ignores credits that are not positive integers of base units", () => {
    for (const amount of ["0", "-5", "1.5", "1e6", "", "abc", " 7"]) ignored(ready(), credit("c1", amount))
  })

  it("expires at the deadline with nothing to return", () => {
    const s = via(ready(), deadline(), { to: "expired" })
    expect(s.emitted.map((e) => e.type)).toEqual(["deposit_request.expired"])
  })

  it("takes a transfer seen at its deadline, before the deadline's step, as late: expired, and the transfer returned", () => {
    const due = "2026-11-23T12:00:00Z"
    const s = via(ready(), credit("c1", AMOUNT, WALLET, due), { to: "expired", guard: "creditAfterDeadline" })
    expect(s.emitted.map((e) => e.type)).toEqual(["deposit_request.expired", "return"])
    expect(returnsOf(s.emitted)).toMatchObject([
      { command_id: `return:${ID}:late_transfer:c1`, amount_base_units: AMOUNT, to: WALLET }
    ])
    expect(s.context.settle_commanded).toBe(false)
    // A millisecond earlier it is on time.
    expect(next(ready(), credit("c1", AMOUNT, WALLET, "2026-11-23T11:59:59.999Z")).status).toBe("deposited")
  })

  it("expires at once when the merchant cancels it; a transfer after that goes back to its sender", () => {
    let s = via(ready(), cancelled(null), { to: "expired" })
    expect(s.emitted.map((e) => e.type)).toEqual(["deposit_request.expired"])
    expect(s.context.cancellation).toEqual({ at: T1, reason: null })
    s = next(s, credit("late", "5000000", WALLET, T2))
    expect(s.status).toBe("expired")
    expect(returnsOf(s.emitted).map((r) => [r.amount_base_units, r.to])).toEqual([["5000000", WALLET]])
  })

  it("pauses on attention with the attention object", () => {
    const s = via(ready(), attention("deep_reorg"), { to: "needs_attention" })
    expect(s.emitted).toEqual([
      {
        kind: "lifecycle",
        type: "deposit_request.needs_attention",
        dedupe: "deposit_request.needs_attention"
      }
    ])
    expect(s.context.attention).toEqual({
      code: "deep_reorg",
      message: "The treasury reported deep_reorg.",
      since: T1,
      resolution: "Fix the cause, then resume the request."
    })
  })

  it("ignores what does not apply before funds", () => {
    const s = ready()
    ignored(s, attest(STRANGER))
    ignored(s, settlement())
    ignored(s, returned("return:x"))
    ignored(s, resume())
  })
})

describe("partially_deposited", () => {
  it("takes no cancel once money has arrived (nor does any later status)", () => {
    ignored(partial(), cancelled())
    ignored(deposited(), cancelled())
    ignored(settled(), cancelled())
    ignored(run(fresh(), deadline()).s, cancelled())
  })

  it("adds credits up, ignoring a repeated credit id, until the sum reaches the amount", () => {
    let s = partial("30000000")
    s = ignored(s, credit("c1", "30000000"))
    s = via(s, credit("c2", "30000000"), { to: "partially_deposited", guard: "newCredit" })
    expect(s.context.received_base_units).toBe("60000000")
    s = via(s, credit("c3", "40000001"), { to: "deposited", guard: "newCreditFundsRequest" })
    expect(s.context.received_base_units).toBe("100000001")
    expect(commands(s.emitted)).toEqual([
      { kind: "command", type: "settle", command_id: `settle:${ID}`, amount_base_units: AMOUNT, to: PAYOUT }
    ])
  })

  it("expires at the deadline and returns the whole balance", () => {
    const s = via(partial("40000000"), deadline(), { to: "expired" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.expired", dedupe: "deposit_request.expired" },
      {
        kind: "command",
        type: "return",
        command_id: `return:${ID}:expired_balance:balance`,
        amount_base_units: "40000000",
        to: WALLET,
        reason: "expired_balance"
      }
    ])
  })

  it("takes a transfer seen after its deadline, before the deadline's step, as late: the balance and it go back", () => {
    const s = via(partial("40000000"), credit("c2", "60000000", WALLET, "2026-11-23T12:00:01Z"), {
      to: "expired",
      guard: "creditAfterDeadline"
    })
    expect(returnsOf(s.emitted).map((r) => [r.command_id, r.amount_base_units])).toEqual([
      [`return:${ID}:expired_balance:balance`, "40000000"],
      [`return:${ID}:late_transfer:c2`, "60000000"]
    ])
    expect(s.context.received_base_units).toBe("100000000")
    expect(s.context.returning_base_units).toBe("100000000")
  })

  it("pauses on attention", () => {
    const s = via(partial(), attention(), { to: "needs_attention" })
    expect(s.context.paused_from).toBe("partially_deposited")
  })
})

describe("deposited", () => {
  it("ignores the deadline once funded", () => {
    ignored(deposited(), deadline())
  })

  it("records further credits, which join the remainder", () => {
    const s = via(deposited(), credit("c2", "5"), { to: "deposited", guard: "newCredit" })
    expect(s.emitted).toEqual([])
    expect(s.context.received_base_units).toBe("100000005")
    ignored(s, credit("c2", "5"))
  })

  it("is settled when the settlement lands, returning nothing on an exact payment", () => {
    const s = via(deposited(), settlement(), { to: "settled", guard: "settlementPending" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.settled", dedupe: "deposit_request.settled" }
    ])
    expect(s.context.settlement).toEqual({ tx_hash: "0xsettle", block_number: "10", settled_at: T2 })
    expect(s.context.pending).toEqual([])
  })

  it("returns an overpayment after the settlement lands and stays settled", () => {
    const over = run(deposited("150000000"), credit("c2", "7")).s
    const s = via(over, settlement(), { to: "settled", guard: "settlementPending" })
    const back = {
      kind: "command",
      type: "return",
      command_id: `return:${ID}:overpayment:remainder`,
      amount_base_units: "50000007",
      to: WALLET,
      reason: "overpayment"
    }
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.settled", dedupe: "deposit_request.settled" },
      back
    ])
    const done = via(s, returned(back.command_id), { to: "settled", guard: "returnPending" })
    const recovery = {
      id: back.command_id,
      amount_base_units: "50000007",
      reason: "overpayment",
      transaction_hash: `0xreturn-${back.command_id}`,
      block_number: "11",
      recovered_at: T2
    }
    expect(done.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.recovered_funds", dedupe: back.command_id, recovery }
    ])
    expect(done.context.recoveries).toEqual([recovery])
    expect(done.context.pending).toEqual([])
    ignored(done, returned(back.command_id))
  })

  it("pauses on attention", () => {
    expect(via(deposited(), attention(), { to: "needs_attention" }).context.paused_from).toBe("deposited")
  })
})

describe("settled", () => {
  it("returns each late transfer on its own and stays settled", () => {
    let s = via(settled(), credit("late1", "5"), { to: "settled", guard: "newCredit" })
    expect(s.emitted).toEqual([
      {
        kind: "command",
        type: "return",
        command_id: `return:${ID}:late_transfer:late1`,
        amount_base_units: "5",
        to: WALLET,
        reason: "late_transfer"
      }
    ])
    s = ignored(s, credit("late1", "5"))
    s = via(s, credit("late2", "6", STRANGER), { to: "settled", guard: "newCredit" })
    // A stranger's late transfer goes back to the attested wallet and does not mark the request unsolicited.
    expect(returnsOf(s.emitted)[0]).toMatchObject({ amount_base_units: "6", to: WALLET })
    expect(s.context.likely_unsolicited_at).toBeNull()
    s = via(s, returned(`return:${ID}:late_transfer:late1`), { to: "settled", guard: "returnPending" })
    expect(lifecycleOf(s.emitted)[0]?.recovery).toMatchObject({
      amount_base_units: "5",
      reason: "late_transfer"
    })
    expect(s.context.received_base_units).toBe("100000011")
  })

  it("ignores unknown confirmations, the deadline and a second settlement", () => {
    const s = settled()
    ignored(s, returned("return:unknown"))
    ignored(s, deadline())
    ignored(s, settlement())
  })

  it("pauses on attention", () => {
    expect(via(settled(), attention(), { to: "needs_attention" }).context.paused_from).toBe("settled")
  })
})

describe("expired and returned", () => {
  const expiredWithBalance = () => run(partial("40000000"), deadline()).s
  const balanceId = `return:${ID}:expired_balance:balance`

  it("is returned once the whole balance is back", () => {
    const s = via(expiredWithBalance(), returned(balanceId), {
      to: "returned",
      guard: "expiredBalanceReturnPending"
    })
    expect(s.emitted.map((e) => e.type)).toEqual([
      "deposit_request.recovered_funds",
      "deposit_request.returned"
    ])
    expect(s.context.recoveries).toMatchObject([{ id: balanceId, amount_base_units: "40000000" }])
  })

  it("returns a late transfer after expiry and stays expired when it is back", () => {
    let s = via(run(ready(), deadline()).s, credit("late", "9"), { to: "expired", guard: "newCredit" })
    expect(returnsOf(s.emitted)).toMatchObject([{ reason: "late_transfer", amount_base_units: "9" }])
    s = via(s, returned(`return:${ID}:late_transfer:late`), { to: "expired", guard: "returnPending" })
    expect(s.emitted.map((e) => e.type)).toEqual(["deposit_request.recovered_funds"])
  })

  it("ignores credits and attention for a request that expired before any address existed", () => {
    ignored(run(fresh(), deadline()).s, credit("c1", "9"))
    ignored(run(fresh(), deadline()).s, attention())
  })

  it("returns late transfers after being returned", () => {
    let s = run(expiredWithBalance(), returned(balanceId)).s
    s = via(s, credit("late", "3"), { to: "returned", guard: "newCredit" })
    s = via(s, returned(`return:${ID}:late_transfer:late`), { to: "returned", guard: "returnPending" })
    expect(s.context.recoveries.map((r) => r.reason)).toEqual(["expired_balance", "late_transfer"])
    ignored(s, deadline())
  })

  it("pauses on attention", () => {
    const paused = via(expiredWithBalance(), attention(), { to: "needs_attention", guard: "addressReleased" })
    expect(paused.context.paused_from).toBe("expired")
    const back = run(expiredWithBalance(), returned(balanceId)).s
    expect(via(back, attention(), { to: "needs_attention" }).context.paused_from).toBe("returned")
  })
})

describe("likely unsolicited", () => {
  it("is marked by the first credit from a wallet other than the attested one, once", () => {
    const r = run(ready(), credit("c1", "10", STRANGER, T1), credit("c2", "10", STRANGER, T2))
    expect(r.types.filter((t) => t === "deposit_request.likely_unsolicited")).toHaveLength(1)
    expect(r.s.context.likely_unsolicited_at).toBe(T1)
  })

  it("is marked when a stranger's credit follows the payer's", () => {
    const r = run(ready(), credit("c1", "10"), credit("c2", "10", STRANGER, T2))
    expect(r.types).toEqual(["deposit_request.likely_unsolicited"])
    expect(r.s.context.likely_unsolicited_at).toBe(T2)
  })

  it("compares addresses without regard to letter case", () => {
    const r = run(
      fresh(),
      attest("0xABcD000000000000000000000000000000000000"),
      credit("c1", "10", "0xabcd000000000000000000000000000000000000")
    )
    expect(r.s.context.likely_unsolicited_at).toBeNull()
  })

  it("is marked by a stranger's credit that funds the request, beside deposited", () => {
    const r = run(ready(), credit("c1", AMOUNT, STRANGER))
    expect(r.types).toEqual(["deposit_request.likely_unsolicited", "deposit_request.deposited", "settle"])
  })
})

describe("needs_attention", () => {
  it("raises needs_attention once per request ever; later raises only update the attention object", () => {
    let s = run(deposited(), attention("treasury_out_of_gas", T1)).s
    s = via(s, attention("transfer_reverted", T2), { to: "needs_attention" })
    expect(s.emitted).toEqual([])
    expect(s.context.attention).toMatchObject({ code: "transfer_reverted", since: T1 })
    s = run(s, resume()).s
    expect(s.context.attention).toBeNull()
    const again = run(s, attention("deep_reorg", T2))
    expect(again.s.status).toBe("needs_attention")
    expect(again.emitted).toEqual([])
    expect(again.s.context.attention).toMatchObject({ code: "deep_reorg", since: T2 })
  })

  it("records credits during a pause and moves nothing until resumed", () => {
    let s = run(ready(), attention()).s
    s = via(s, credit("c1", "60000000"), { to: "needs_attention", guard: "newCredit" })
    s = next(s, credit("c2", "60000000"))
    expect(s.emitted).toEqual([])
    expect(s.context.received_base_units).toBe("120000000")
    s = via(s, resume(), { to: "deposited", guard: "fundedWhilePaused" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.deposited", dedupe: "deposit_request.deposited" },
      { kind: "command", type: "settle", command_id: `settle:${ID}`, amount_base_units: AMOUNT, to: PAYOUT }
    ])
    expect(s.context).toMatchObject({ attention: null, paused_from: null, held_credits: [] })
    // The remainder goes back once the settlement lands.
    expect(returnsOf(run(s, settlement()).emitted)).toMatchObject([
      { reason: "overpayment", amount_base_units: "20000000" }
    ])
  })

  it("resumes partially deposited when credits below the amount came in from ready", () => {
    const s = run(ready(), attention(), credit("c1", "5")).s
    expect(via(s, resume(), { to: "partially_deposited", guard: "partlyFundedWhilePaused" }).emitted).toEqual(
      []
    )
    const p = run(partial(), attention()).s
    via(p, resume(), { to: "partially_deposited", guard: "partlyFundedWhilePaused" })
  })

  it("resumes ready when nothing came in", () => {
    const s = via(run(ready(), attention()).s, resume(), { to: "ready", guard: "pausedFromReady" })
    expect(s.emitted).toEqual([])
  })

  it("expires on resume when the deadline passed before funding, returning the whole balance", () => {
    let s = run(partial("40000000"), attention()).s
    s = via(s, deadline(), { to: "needs_attention", guard: "deadlineBeforeFunding" })
    expect(s.emitted).toEqual([])
    s = next(s, credit("c2", "70000000"))
    s = via(s, resume(), { to: "expired", guard: "expiredWhilePaused" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.expired", dedupe: "deposit_request.expired" },
      {
        kind: "command",
        type: "return",
        command_id: `return:${ID}:expired_balance:balance`,
        amount_base_units: "110000000",
        to: WALLET,
        reason: "expired_balance"
      }
    ])
  })

  it("ignores the deadline during a pause once funded", () => {
    const s = run(ready(), attention(), credit("c1", AMOUNT)).s
    ignored(s, deadline())
    via(s, resume(), { to: "deposited", guard: "fundedWhilePaused" })
    ignored(run(deposited(), attention()).s, deadline())
  })

  it("resumes deposited and retries the outstanding settlement under its own id", () => {
    const s = via(run(deposited(), attention()).s, resume(), {
      to: "deposited",
      guard: "pausedFromDeposited"
    })
    expect(s.emitted).toEqual([{ kind: "command", type: "retry", command_id: `settle:${ID}` }])
  })

  it("resumes to another payout address with one new settlement there, under a new id, and no retry of the old", () => {
    const OTHER = "0x5555555555555555555555555555555555555555"
    const THIRD = "0x6666666666666666666666666666666666666666"
    const toOther = (to: string): DepositRequestEvent => ({
      type: "operator.resumed",
      at: T2,
      payout_address: to
    })
    let s = run(deposited("130000000"), attention("payout_address_blocked")).s
    s = via(s, toOther(OTHER), { to: "deposited", guard: "pausedFromDeposited" })
    const first = `settle:${ID}:redirect:1`
    expect(s.emitted).toEqual([
      { kind: "command", type: "settle", command_id: first, amount_base_units: AMOUNT, to: OTHER }
    ])
    expect(s.context.payout_address).toBe(OTHER)
    expect(s.context.pending).toEqual([
      { kind: "command", type: "settle", command_id: first, amount_base_units: AMOUNT, to: OTHER }
    ])
    // Blocked again: the next redirect counts on from the id it replaces.
    s = run(s, attention("payout_address_blocked")).s
    s = next(s, toOther(THIRD))
    expect(s.emitted).toEqual([
      {
        kind: "command",
        type: "settle",
        command_id: `settle:${ID}:redirect:2`,
        amount_base_units: AMOUNT,
        to: THIRD
      }
    ])
    // A plain resume afterwards retries the redirected settlement under its own id; the settlement lands there.
    s = run(s, attention("transfer_reverted")).s
    s = next(s, resume())
    expect(s.emitted).toEqual([{ kind: "command", type: "retry", command_id: `settle:${ID}:redirect:2` }])
    const done = run(s, settlement())
    expect(done.s.status).toBe("settled")
    expect(done.s.context.pending).toEqual([
      expect.objectContaining({ type: "return", reason: "overpayment", amount_base_units: "30000000" })
    ])
  })

  it("resumes to another payout address still retrying outstanding returns, and settles there when funded", () => {
    const OTHER = "0x5555555555555555555555555555555555555555"
    const toOther: DepositRequestEvent = { type: "operator.resumed", at: T2, payout_address: OTHER }
    // Nothing outstanding to redirect yet: funded during the pause, the settlement goes to the new address.
    const funded = next(run(ready(), attention("payout_address_blocked"), credit("c1", AMOUNT)).s, toOther)
    expect(commands(funded.emitted)).toEqual([
      { kind: "command", type: "settle", command_id: `settle:${ID}`, amount_base_units: AMOUNT, to: OTHER }
    ])
    // Settled already: nothing to redirect, returns retried as before.
    const overpaid = run(deposited("150000000"), settlement(), attention("payout_address_blocked")).s
    const after = next(overpaid, toOther)
    expect(after.emitted).toEqual([
      { kind: "command", type: "retry", command_id: `return:${ID}:overpayment:remainder` }
    ])
    expect(after.context.payout_address).toBe(PAYOUT)
  })

  it("records a settlement landing during a pause and reports it as settled on resume", () => {
    let s = run(deposited("130000000"), attention()).s
    s = via(s, settlement(), { to: "needs_attention", guard: "settlementPending" })
    expect(s.emitted).toEqual([])
    expect(s.context.settlement).toMatchObject({ tx_hash: "0xsettle" })
    s = ignored(s, settlement())
    s = next(s, credit("c2", "1"))
    s = via(s, resume(), { to: "settled", guard: "settledWhilePaused" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.settled", dedupe: "deposit_request.settled" },
      {
        kind: "command",
        type: "return",
        command_id: `return:${ID}:overpayment:remainder`,
        amount_base_units: "30000001",
        to: WALLET,
        reason: "overpayment"
      }
    ])
  })

  it("ignores a settlement confirmation when none is outstanding", () => {
    ignored(run(ready(), attention()).s, settlement())
  })

  it("resumes settled, confirming returns during the pause and returning the credits it held", () => {
    let s = run(deposited("150000000"), settlement(), attention()).s
    const overpayment = `return:${ID}:overpayment:remainder`
    s = via(s, returned(overpayment), { to: "needs_attention", guard: "returnPending" })
    expect(s.emitted.map((e) => e.type)).toEqual(["deposit_request.recovered_funds"])
    s = next(s, credit("late", "4", STRANGER))
    expect(s.context.likely_unsolicited_at).toBeNull()
    s = via(s, resume(), { to: "settled", guard: "pausedFromSettled" })
    expect(s.emitted).toEqual([
      {
        kind: "command",
        type: "return",
        command_id: `return:${ID}:late_transfer:late`,
        amount_base_units: "4",
        to: WALLET,
        reason: "late_transfer"
      }
    ])
  })

  it("resumes returned when the expired balance came back during the pause", () => {
    const balanceId = `return:${ID}:expired_balance:balance`
    let s = run(partial("40000000"), deadline(), attention(), returned(balanceId)).s
    expect(s.status).toBe("needs_attention")
    s = via(s, resume(), { to: "returned", guard: "returnedWhilePaused" })
    expect(s.emitted).toEqual([
      { kind: "lifecycle", type: "deposit_request.returned", dedupe: "deposit_request.returned" }
    ])
  })

  it("resumes expired, retrying the outstanding return", () => {
    const s = run(partial("40000000"), deadline(), attention(), credit("late", "2")).s
    const back = via(s, resume(), { to: "expired", guard: "pausedFromExpired" })
    expect(back.emitted).toEqual([
      { kind: "command", type: "retry", command_id: `return:${ID}:expired_balance:balance` },
      {
        kind: "command",
        type: "return",
        command_id: `return:${ID}:late_transfer:late`,
        amount_base_units: "2",
        to: WALLET,
        reason: "late_transfer"
      }
    ])
  })

  it("resumes returned, returning the credits it held", () => {
    const balanceId = `return:${ID}:expired_balance:balance`
    const s = run(partial("40000000"), deadline(), returned(balanceId), attention(), credit("late", "2")).s
    const back = via(s, resume(), { to: "returned", guard: "pausedFromReturned" })
    expect(returnsOf(back.emitted)).toMatchObject([{ command_id: `return:${ID}:late_transfer:late` }])
  })

  it("ignores a resume when nothing is paused", () => {
    ignored(deposited(), resume())
    ignored(settled(), resume())
  })
})

describe("every transition of the table", () => {
  // Runs after the tests above in this file (vitest runs a file's tests in order).
  it("is taken by a test", () => {
    const missing = transitionTable()
      .map(keyOf)
      .filter((k) => !covered.has(k))
    expect(missing).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Properties over random event sequences.

type Op =
  | { readonly op: "verify"; readonly method: "mailbox" | "merchant_session" }
  | { readonly op: "attest"; readonly stranger: boolean }
  | { readonly op: "credit"; readonly id: number; readonly amount: string; readonly stranger: boolean }
  | { readonly op: "settlement" }
  /** Confirms the pending return at `pick` (modulo), or an unknown id when none is pending. */
  | { readonly op: "return"; readonly pick: number }
  | { readonly op: "deadline" }
  | { readonly op: "attention"; readonly code: string }
  | { readonly op: "resume" }

const opArb = (amount: bigint): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      arbitrary: fc.record({
        op: fc.constant("verify" as const),
        method: fc.constantFrom("mailbox", "merchant_session")
      }),
      weight: 2
    },
    { arbitrary: fc.record({ op: fc.constant("attest" as const), stranger: fc.boolean() }), weight: 3 },
    {
      arbitrary: fc.record({
        op: fc.constant("credit" as const),
        id: fc.nat({ max: 9 }),
        // Mostly parts of the amount, so partial payments and expired balances are common.
        amount: fc.oneof(
          { arbitrary: fc.bigInt({ min: 1n, max: amount / 3n + 1n }).map(String), weight: 4 },
          { arbitrary: fc.constant(amount.toString()), weight: 1 },
          { arbitrary: fc.bigInt({ min: amount, max: amount * 3n }).map(String), weight: 1 },
          { arbitrary: fc.constantFrom("0", "-1", "1.5"), weight: 1 }
        ),
        stranger: fc.boolean()
      }),
      weight: 8
    },
    { arbitrary: fc.constant({ op: "settlement" as const }), weight: 3 },
    { arbitrary: fc.record({ op: fc.constant("return" as const), pick: fc.nat({ max: 5 }) }), weight: 4 },
    { arbitrary: fc.constant({ op: "deadline" as const }), weight: 1 },
    {
      arbitrary: fc.record({ op: fc.constant("attention" as const), code: fc.constantFrom("a", "b") }),
      weight: 1
    },
    { arbitrary: fc.constant({ op: "resume" as const }), weight: 2 }
  )

const toEvent = (s: Step, o: Op, i: number): DepositRequestEvent => {
  const at = new Date(Date.UTC(2026, 10, 22, 12, 0, i)).toISOString().replace(".000Z", "Z")
  switch (o.op) {
    case "verify":
      return verified(o.method, at)
    case "attest":
      return attest(o.stranger ? STRANGER : WALLET, at)
    case "credit":
      return credit(`c${o.id}`, o.amount, o.stranger ? STRANGER : WALLET, at)
    case "settlement":
      return settlement(at)
    case "return": {
      const pending = s.context.pending.filter((p) => p.type === "return")
      const target = pending[o.pick % Math.max(pending.length, 1)]
      return returned(target?.command_id ?? `return:${ID}:unknown:${o.pick}`, at)
    }
    case "deadline":
      return deadline(at)
    case "attention":
      return attention(o.code, at)
    case "resume":
      return resume(at)
  }
}

const ONCE = [
  "verification.approved",
  "deposit_request.ready",
  "deposit_request.deposited",
  "deposit_request.settled",
  "deposit_request.expired",
  "deposit_request.returned",
  "deposit_request.likely_unsolicited",
  "deposit_request.needs_attention"
] as const

// The at-most-once events that mark a status change, and the status they mark.
const MARKS: Partial<Record<string, DepositRequestStatus>> = {
  "deposit_request.ready": "ready",
  "deposit_request.deposited": "deposited",
  "deposit_request.settled": "settled",
  "deposit_request.expired": "expired",
  "deposit_request.returned": "returned",
  "deposit_request.needs_attention": "needs_attention"
}

const scenarioArb = fc
  .record({
    mode: fc.constantFrom<PayerPolicyMode>("none", "mailbox", "merchant_session"),
    amount: fc.bigInt({ min: 1n, max: 10n ** 12n })
  })
  .chain(({ mode, amount }) =>
    fc.record({
      mode: fc.constant(mode),
      amount: fc.constant(amount),
      // Long sequences, so that most runs get past the payer and through the money paths.
      ops: fc.array(opArb(amount), { maxLength: 60, size: "max" })
    })
  )

describe("invariants under random event sequences", () => {
  it("hold after every step of every sequence", () => {
    fc.assert(
      fc.property(scenarioArb, ({ mode, amount, ops }) => {
        let s = fresh(mode, amount.toString())
        const emitted: Array<Emitted> = []
        const seen = new Set<DepositRequestStatus>([s.status])
        let received = 0n
        ops.forEach((o, i) => {
          const event = toEvent(s, o, i)
          // The host stores JSON: what it stores restores to the same state.
          const json = JSON.parse(JSON.stringify(s.snapshot))
          expect(json).toEqual(s.snapshot)
          const restored = depositRequestMachine.resolveState(json)
          expect(restored.value).toBe(s.status)
          expect(restored.context).toEqual(s.context)
          const before = s
          s = step(json, event)
          expect(step(before.snapshot, event)).toEqual(s)
          emitted.push(...s.emitted)
          const c = s.context

          expect(statusValues).toContain(s.status)
          const now = BigInt(c.received_base_units)
          expect(now >= received).toBe(true)
          received = now

          // A marking event is emitted exactly when its status is first entered.
          for (const e of lifecycleOf(s.emitted)) {
            const marks = MARKS[e.type]
            if (marks !== undefined) expect(s.status).toBe(marks)
          }
          if (!seen.has(s.status) && s.status !== "awaiting_payer" && s.status !== "partially_deposited") {
            expect(s.emitted.map((e) => e.type)).toContain(
              Object.keys(MARKS).find((k) => MARKS[k] === s.status)
            )
          }
          seen.add(s.status)

          // Money: never more commanded out than came in, settlement of exactly the amount, once.
          const settles = commands(emitted).filter((x) => x.type === "settle")
          expect(settles.length).toBeLessThanOrEqual(1)
          for (const x of settles)
            expect(x).toMatchObject({ amount_base_units: amount.toString(), to: PAYOUT })
          const returnedOut = returnsOf(emitted).reduce((sum, x) => sum + BigInt(x.amount_base_units), 0n)
          expect((settles.length > 0 ? amount : 0n) + returnedOut <= received).toBe(true)
          const recovered = c.recoveries.reduce((sum, r) => sum + BigInt(r.amount_base_units), 0n)
          expect(recovered <= returnedOut).toBe(true)

          // Status and facts agree.
          if (s.status === "ready") expect(now).toBe(0n)
          if (s.status === "partially_deposited") expect(now > 0n && now < amount).toBe(true)
          if (s.status === "deposited") expect(now >= amount).toBe(true)
          expect(s.status === "needs_attention").toBe(c.attention !== null)
          if (s.status !== "awaiting_payer" && !(s.status === "expired" && c.payer_wallet === null))
            expect(c.address).toBe(DEPOSIT)
          // A request that is over strands nothing: everything received is commanded somewhere.
          if (s.status === "settled" || s.status === "expired" || s.status === "returned")
            expect((settles.length > 0 ? amount : 0n) + returnedOut).toBe(now)
        })

        for (const type of ONCE) expect(emitted.filter((e) => e.type === type).length).toBeLessThanOrEqual(1)
        const returnIds = returnsOf(emitted).map((x) => x.command_id)
        expect(new Set(returnIds).size).toBe(returnIds.length)
        const dedupes = lifecycleOf(emitted).map((e) => e.dedupe)
        expect(new Set(dedupes).size).toBe(dedupes.length)
        // A retry names a command issued earlier.
        const issued = new Set(commands(emitted).flatMap((x) => (x.type === "retry" ? [] : [x.command_id])))
        for (const x of commands(emitted)) if (x.type === "retry") expect(issued.has(x.command_id)).toBe(true)
      }),
      { numRuns: 400 }
    )
  })
})

/** Checks every step along random event sequences; `check` answers the step to go on from. */
const alongRandomSequences = (check: (s: Step, event: DepositRequestEvent) => Step) =>
  fc.assert(
    fc.property(scenarioArb, ({ mode, amount, ops }) => {
      let s = fresh(mode, amount.toString())
      ops.forEach((o, i) => {
        s = check(s, toEvent(s, o, i))
      })
    }),
    { numRuns: 200 }
  )

describe("a step", () => {
  it("from the previous step's own snapshot equals one from that snapshot read back from JSON, and leaves it as it was", () => {
    alongRandomSequences((s, event) => {
      const before = JSON.stringify(s.snapshot)
      // The same snapshot stepped twice (a commit tried again), then from its JSON as the database gives it.
      const first = step(s.snapshot, event)
      const again = step(s.snapshot, event)
      const fromJson = step(JSON.parse(before), event)
      expect(JSON.stringify(s.snapshot)).toBe(before)
      for (const other of [again, fromJson]) {
        expect(other.snapshot).toEqual(first.snapshot)
        expect(other.status).toBe(first.status)
        expect(other.emitted).toEqual(first.emitted)
      }
      return first
    })
  })

  it("equals XState's own transition() (a fresh inert scope each time) along any sequence", () => {
    alongRandomSequences((s, event) => {
      const persisted = JSON.parse(JSON.stringify(s.snapshot))
      const [snapshot, actions] = transition(
        depositRequestMachine,
        depositRequestMachine.resolveState(persisted),
        event
      )
      const next = step(persisted, event)
      expect(next.snapshot).toEqual(depositRequestMachine.getPersistedSnapshot(snapshot))
      expect(next.status).toBe(snapshot.value)
      const emitted = actions.flatMap((a) => {
        const { type, params } = a as unknown as { type: string; params?: { event?: unknown } }
        return type === "xstate.emit" && params?.event !== undefined ? [params.event] : []
      })
      expect(next.emitted).toEqual(emitted)
      return next
    })
  })
})

describe("the first snapshot", () => {
  it("equals XState's initial transition for any input, and steps on exactly like it", () => {
    const input = fc.record({
      id: fc.string({ minLength: 1, maxLength: 40 }).map((s) => `dr_${s}`),
      amount_base_units: fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String),
      payout_address: fc
        .uint8Array({ minLength: 20, maxLength: 20 })
        .map((b) => `0x${Buffer.from(b).toString("hex")}`),
      payer_policy_mode: fc.constantFrom<PayerPolicyMode>("none", "mailbox", "merchant_session"),
      expires_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      created_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
    })
    fc.assert(
      fc.property(input, (i) => {
        const ours = start(i)
        const xstate = startByXState(i)
        expect(JSON.parse(JSON.stringify(ours))).toEqual(JSON.parse(JSON.stringify(xstate)))
        // Two creates never share a mutable part of their snapshots.
        expect(start(i).snapshot).not.toBe(ours.snapshot)
        const event: DepositRequestEvent = { type: "deadline.reached", at: T1 }
        expect(step(ours.snapshot, event)).toEqual(step(xstate.snapshot, event))
      }),
      { numRuns: 300 }
    )
  })
})
