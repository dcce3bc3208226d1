import { and, assign, emit, enqueueActions, setup } from "xstate"

/**
 * The deposit request lifecycle, pure: no I/O, no clock, no randomness. Time arrives in events (`at`, ISO 8601).
 * It decides and emits what must happen — lifecycle events for the merchant and commands for the services — and
 * never does it. Amounts are base-unit strings (BigInt arithmetic only), so the snapshot stays JSON.
 *
 * Bump MACHINE_VERSION when a change alters the shape of persisted snapshots, and add a snapshot migration.
 */
export const MACHINE_VERSION = 1

export type PayerPolicyMode = "none" | "mailbox" | "merchant_session"
export type RecoveryReason = "overpayment" | "expired_balance" | "late_transfer"

export interface DepositRequestInput {
  readonly id: string
  readonly amount_base_units: string
  readonly payout_address: string
  readonly payer_policy_mode: PayerPolicyMode
  readonly expires_at: string
  readonly created_at: string
}

export interface Recovery {
  readonly id: string
  readonly amount_base_units: string
  readonly reason: RecoveryReason
  readonly transaction_hash: string
  readonly block_number: string
  readonly recovered_at: string
}

/** Why automatic movement paused and what resumes it. */
export interface Attention {
  readonly code: string
  readonly message: string
  readonly since: string
  readonly resolution: string
}

export type Command =
  | {
      readonly kind: "command"
      readonly type: "settle"
      readonly command_id: string
      readonly amount_base_units: string
      readonly to: string
    }
  | {
      readonly kind: "command"
      readonly type: "return"
      readonly command_id: string
      readonly amount_base_units: string
      readonly to: string
      readonly reason: RecoveryReason
    }
  /** Carry out again an outstanding command (same id) after an operator resumed the request. */
  | { readonly kind: "command"; readonly type: "retry"; readonly command_id: string }

export type LifecycleType =
  | "verification.approved"
  | "deposit_request.ready"
  | "deposit_request.deposited"
  | "deposit_request.settled"
  | "deposit_request.expired"
  | "deposit_request.returned"
  | "deposit_request.recovered_funds"
  | "deposit_request.likely_unsolicited"
  | "deposit_request.needs_attention"

export interface LifecycleEvent {
  readonly kind: "lifecycle"
  readonly type: LifecycleType
  /** Unique per request: the type for at-most-once events, the return's id for recovered_funds. */
  readonly dedupe: string
  readonly recovery?: Recovery
}

export type Emitted = LifecycleEvent | Command

type PendingCommand = Exclude<Command, { type: "retry" }>

export interface DepositRequestContext {
  readonly id: string
  readonly amount_base_units: string
  readonly payout_address: string
  readonly payer_policy_mode: PayerPolicyMode
  readonly expires_at: string
  readonly created_at: string
  readonly received_base_units: string
  readonly credit_ids: ReadonlyArray<string>
  readonly verification_completed_at: string | null
  readonly likely_unsolicited_at: string | null
  readonly payer_wallet: string | null
  readonly address: string | null
  readonly wallet_bound_at: string | null
  readonly settle_commanded: boolean
  readonly settlement: { tx_hash: string; block_number: string; settled_at: string } | null
  /** Commanded and not yet confirmed. */
  readonly pending: ReadonlyArray<PendingCommand>
  /** Base units commanded back to the payer so far (pending or confirmed). */
  readonly returning_base_units: string
  readonly recoveries: ReadonlyArray<Recovery>
  readonly attention: Attention | null
  readonly attention_raised: boolean
  readonly paused_from: DepositRequestStatus | null
  readonly deadline_passed: boolean
}

export type DepositRequestStatus =
  | "awaiting_payer"
  | "ready"
  | "partially_deposited"
  | "deposited"
  | "settled"
  | "expired"
  | "returned"
  | "needs_attention"

export type DepositRequestEvent =
  | { readonly type: "payer.verified"; readonly at: string; readonly method: "mailbox" | "merchant_session" }
  | {
      readonly type: "payer.wallet_attested"
      readonly at: string
      readonly wallet: string
      readonly address: string
    }
  | {
      readonly type: "deposit.credited"
      readonly at: string
      readonly credit_id: string
      readonly amount_base_units: string
      readonly from: string
    }
  | {
      readonly type: "settlement.confirmed"
      readonly at: string
      readonly tx_hash: string
      readonly block_number: string
    }
  | {
      readonly type: "return.confirmed"
      readonly at: string
      readonly command_id: string
      readonly tx_hash: string
      readonly block_number: string
    }
  | { readonly type: "deadline.reached"; readonly at: string }
  | {
      readonly type: "attention.raised"
      readonly at: string
      readonly code: string
      readonly message: string
      readonly resolution: string
    }
  | { readonly type: "operator.resumed"; readonly at: string }

const add = (a: string, b: string) => (BigInt(a) + BigInt(b)).toString()
const sub = (a: string, b: string) => (BigInt(a) - BigInt(b)).toString()
const gte = (a: string, b: string) => BigInt(a) >= BigInt(b)
const sameAddress = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase()

const lifecycle = (type: LifecycleType, extra: Partial<LifecycleEvent> = {}): LifecycleEvent => ({
  kind: "lifecycle",
  type,
  dedupe: type,
  ...extra
})

/** The balance still held at the deposit address and not yet commanded anywhere. */
const unallocated = (c: DepositRequestContext) =>
  sub(sub(c.received_base_units, c.settle_commanded ? c.amount_base_units : "0"), c.returning_base_units)

const returnCommand = (
  c: DepositRequestContext,
  amount: string,
  reason: RecoveryReason,
  key: string
): PendingCommand => ({
  kind: "command",
  type: "return",
  command_id: `return:${c.id}:${reason}:${key}`,
  amount_base_units: amount,
  to: c.payer_wallet ?? "",
  reason
})

export const depositRequestMachine = setup({
  types: {
    context: {} as DepositRequestContext,
    events: {} as DepositRequestEvent,
    input: {} as DepositRequestInput,
    emitted: {} as Emitted
  },
  guards: {
    needsProof: ({ context }) => context.payer_policy_mode !== "none",
    verified: ({ context }) =>
      context.payer_policy_mode === "none" || context.verification_completed_at !== null,
    newCredit: ({ context, event }) =>
      event.type === "deposit.credited" &&
      !context.credit_ids.includes(event.credit_id) &&
      gte(event.amount_base_units, "1"),
    creditFundsRequest: ({ context, event }) =>
      event.type === "deposit.credited" &&
      !context.credit_ids.includes(event.credit_id) &&
      gte(add(context.received_base_units, event.amount_base_units), context.amount_base_units),
    knownPendingReturn: ({ context, event }) =>
      event.type === "return.confirmed" && context.pending.some((p) => p.command_id === event.command_id),
    expiredBalanceConfirmed: ({ context, event }) =>
      event.type === "return.confirmed" &&
      context.pending.some(
        (p) => p.command_id === event.command_id && p.type === "return" && p.reason === "expired_balance"
      ),
    hasBalance: ({ context }) => gte(unallocated(context), "1"),
    settlementPending: ({ context }) => context.pending.some((p) => p.type === "settle"),
    pausedFromAwaitingPayer: ({ context }) => context.paused_from === "awaiting_payer",
    pausedFromReady: ({ context }) => context.paused_from === "ready",
    pausedFromPartial: ({ context }) => context.paused_from === "partially_deposited",
    pausedFromDeposited: ({ context }) => context.paused_from === "deposited",
    pausedFromSettled: ({ context }) => context.paused_from === "settled",
    pausedFromExpired: ({ context }) => context.paused_from === "expired",
    pausedFromReturned: ({ context }) => context.paused_from === "returned",
    fundedWhilePaused: ({ context }) =>
      (context.paused_from === "ready" || context.paused_from === "partially_deposited") &&
      !context.settle_commanded &&
      gte(context.received_base_units, context.amount_base_units),
    // Without an attested wallet there is no address to pay, and no one to return to.
    hasWallet: ({ context }) => context.payer_wallet !== null,
    expiredWhilePaused: ({ context }) =>
      context.deadline_passed &&
      !context.settle_commanded &&
      (context.paused_from === "awaiting_payer" ||
        context.paused_from === "ready" ||
        context.paused_from === "partially_deposited")
  },
  actions: {
    markVerified: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "payer.verified" || context.verification_completed_at !== null) return
      enqueue.assign({ verification_completed_at: event.at })
      enqueue.emit(lifecycle("verification.approved"))
    }),
    bindWallet: enqueueActions(({ event, enqueue }) => {
      if (event.type !== "payer.wallet_attested") return
      enqueue.assign({ payer_wallet: event.wallet, address: event.address, wallet_bound_at: event.at })
      enqueue.emit(lifecycle("deposit_request.ready"))
    }),
    /** Records a finalized credit; the first one from a stranger marks the request likely unsolicited. */
    recordCredit: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "deposit.credited" || context.credit_ids.includes(event.credit_id)) return
      const first = context.credit_ids.length === 0
      enqueue.assign({
        received_base_units: add(context.received_base_units, event.amount_base_units),
        credit_ids: [...context.credit_ids, event.credit_id]
      })
      if (first && !sameAddress(context.payer_wallet, event.from) && context.likely_unsolicited_at === null) {
        enqueue.assign({ likely_unsolicited_at: event.at })
        enqueue.emit(lifecycle("deposit_request.likely_unsolicited"))
      }
    }),
    /** Funded: settle exactly the amount, once. */
    commandSettlement: enqueueActions(({ context, enqueue }) => {
      if (context.settle_commanded) return
      const settle: PendingCommand = {
        kind: "command",
        type: "settle",
        command_id: `settle:${context.id}`,
        amount_base_units: context.amount_base_units,
        to: context.payout_address
      }
      enqueue.assign({ settle_commanded: true, pending: [...context.pending, settle] })
      enqueue.emit(lifecycle("deposit_request.deposited"))
      enqueue.emit(settle)
    }),
    /** After settlement, whatever came in beyond the amount goes back to the payer. */
    confirmSettlement: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "settlement.confirmed") return
      const remainder = unallocated(context)
      const pending = context.pending.filter((p) => p.type !== "settle")
      enqueue.assign({
        settlement: { tx_hash: event.tx_hash, block_number: event.block_number, settled_at: event.at },
        pending
      })
      enqueue.emit(lifecycle("deposit_request.settled"))
      if (gte(remainder, "1")) {
        const back = returnCommand(context, remainder, "overpayment", "remainder")
        enqueue.assign({
          pending: [...pending, back],
          returning_base_units: add(context.returning_base_units, remainder)
        })
        enqueue.emit(back)
      }
    }),
    /** A transfer arriving after the request is over goes straight back. */
    returnLateCredit: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "deposit.credited" || context.credit_ids.includes(event.credit_id)) return
      const back = returnCommand(context, event.amount_base_units, "late_transfer", event.credit_id)
      enqueue.assign({
        received_base_units: add(context.received_base_units, event.amount_base_units),
        credit_ids: [...context.credit_ids, event.credit_id],
        pending: [...context.pending, back],
        returning_base_units: add(context.returning_base_units, event.amount_base_units)
      })
      enqueue.emit(back)
    }),
    emitExpired: emit(lifecycle("deposit_request.expired")),
    /** Expired with funds: the whole balance goes back. */
    returnExpiredBalance: enqueueActions(({ context, enqueue }) => {
      const balance = unallocated(context)
      if (!gte(balance, "1")) return
      const back = returnCommand(context, balance, "expired_balance", "balance")
      enqueue.assign({
        pending: [...context.pending, back],
        returning_base_units: add(context.returning_base_units, balance)
      })
      enqueue.emit(back)
    }),
    confirmReturn: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "return.confirmed") return
      const done = context.pending.find((p) => p.command_id === event.command_id)
      if (done === undefined || done.type !== "return") return
      const recovery: Recovery = {
        id: done.command_id,
        amount_base_units: done.amount_base_units,
        reason: done.reason,
        transaction_hash: event.tx_hash,
        block_number: event.block_number,
        recovered_at: event.at
      }
      enqueue.assign({
        pending: context.pending.filter((p) => p.command_id !== event.command_id),
        recoveries: [...context.recoveries, recovery]
      })
      enqueue.emit(
        lifecycle("deposit_request.recovered_funds", {
          dedupe: `recovered_funds:${done.command_id}`,
          recovery
        })
      )
    }),
    emitReturned: emit(lifecycle("deposit_request.returned")),
    /** While paused: the settlement landed; the remainder (if any) waits for the resume. */
    recordSettlement: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "settlement.confirmed") return
      enqueue.assign({
        settlement: { tx_hash: event.tx_hash, block_number: event.block_number, settled_at: event.at },
        pending: context.pending.filter((p) => p.type !== "settle")
      })
      enqueue.emit(lifecycle("deposit_request.settled"))
    }),
    resumeAsSettled: assign({ paused_from: "settled" as const }),
    resumeAsReturned: assign({ paused_from: "returned" as const }),
    markDeadlinePassed: assign({ deadline_passed: true }),
    /** Pauses automatic movement; the merchant hears of it once per request. */
    pause: enqueueActions(({ context, event, enqueue }, params: { from: DepositRequestStatus | "same" }) => {
      if (event.type !== "attention.raised") return
      const attention = {
        code: event.code,
        message: event.message,
        since: event.at,
        resolution: event.resolution
      }
      enqueue.assign({
        attention,
        paused_from: params.from === "same" ? context.paused_from : params.from,
        attention_raised: true
      })
      if (!context.attention_raised) enqueue.emit(lifecycle("deposit_request.needs_attention"))
    }),
    /** Resumes: outstanding commands are carried out again under their own ids (never a second transfer). */
    resume: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ attention: null, paused_from: null })
      for (const p of context.pending)
        enqueue.emit({ kind: "command", type: "retry", command_id: p.command_id })
    }),
    /** Credits recorded while paused that arrived after the end are returned on resume. */
    returnCreditsHeldWhilePaused: enqueueActions(({ context, enqueue }) => {
      const balance = unallocated(context)
      if (!gte(balance, "1")) return
      // A settlement confirmed while paused leaves its remainder here: that part is an overpayment.
      const reason =
        context.settlement !== null &&
        context.recoveries.every((r) => r.reason !== "overpayment") &&
        !context.pending.some((p) => p.type === "return" && p.reason === "overpayment")
          ? "overpayment"
          : "late_transfer"
      const back = returnCommand(context, balance, reason, `paused:${context.credit_ids.length}`)
      enqueue.assign({
        pending: [...context.pending, back],
        returning_base_units: add(context.returning_base_units, balance)
      })
      enqueue.emit(back)
    })
  }
}).createMachine({
  id: "depositRequest",
  context: ({ input }) => ({
    ...input,
    received_base_units: "0",
    credit_ids: [],
    verification_completed_at: null,
    likely_unsolicited_at: null,
    payer_wallet: null,
    address: null,
    wallet_bound_at: null,
    settle_commanded: false,
    settlement: null,
    pending: [],
    returning_base_units: "0",
    recoveries: [],
    attention: null,
    attention_raised: false,
    paused_from: null,
    deadline_passed: false
  }),
  initial: "awaiting_payer",
  states: {
    awaiting_payer: {
      on: {
        "payer.verified": { guard: "needsProof", actions: "markVerified" },
        "payer.wallet_attested": { guard: "verified", target: "ready", actions: "bindWallet" },
        "deadline.reached": { target: "expired", actions: "emitExpired" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "awaiting_payer" } }
        }
      }
    },
    ready: {
      on: {
        "deposit.credited": [
          {
            guard: "creditFundsRequest",
            target: "deposited",
            actions: ["recordCredit", "commandSettlement"]
          },
          { guard: "newCredit", target: "partially_deposited", actions: "recordCredit" }
        ],
        "deadline.reached": { target: "expired", actions: "emitExpired" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "ready" } }
        }
      }
    },
    partially_deposited: {
      on: {
        "deposit.credited": [
          {
            guard: "creditFundsRequest",
            target: "deposited",
            actions: ["recordCredit", "commandSettlement"]
          },
          { guard: "newCredit", actions: "recordCredit" }
        ],
        "deadline.reached": { target: "expired", actions: ["emitExpired", "returnExpiredBalance"] },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "partially_deposited" } }
        }
      }
    },
    deposited: {
      on: {
        // Credits before the settlement lands are part of the overpayment remainder.
        "deposit.credited": { guard: "newCredit", actions: "recordCredit" },
        "settlement.confirmed": { target: "settled", actions: "confirmSettlement" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "deposited" } }
        }
      }
    },
    settled: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: "returnLateCredit" },
        "return.confirmed": { guard: "knownPendingReturn", actions: "confirmReturn" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "settled" } }
        }
      }
    },
    expired: {
      on: {
        "deposit.credited": { guard: and(["newCredit", "hasWallet"]), actions: "returnLateCredit" },
        "return.confirmed": [
          {
            guard: "expiredBalanceConfirmed",
            target: "returned",
            actions: ["confirmReturn", "emitReturned"]
          },
          { guard: "knownPendingReturn", actions: "confirmReturn" }
        ],
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "expired" } }
        }
      }
    },
    returned: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: "returnLateCredit" },
        "return.confirmed": { guard: "knownPendingReturn", actions: "confirmReturn" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "returned" } }
        }
      }
    },
    needs_attention: {
      on: {
        // Recorded, not acted on: nothing moves until an operator resumes.
        "deposit.credited": { guard: "newCredit", actions: "recordCredit" },
        "deadline.reached": { actions: "markDeadlinePassed" },
        "attention.raised": { actions: { type: "pause", params: { from: "same" } } },
        // Confirmations of transfers already under way are still recorded; what they would trigger waits.
        "settlement.confirmed": {
          guard: "settlementPending",
          actions: ["recordSettlement", "resumeAsSettled"]
        },
        "return.confirmed": [
          {
            guard: "expiredBalanceConfirmed",
            actions: ["confirmReturn", "emitReturned", "resumeAsReturned"]
          },
          { guard: "knownPendingReturn", actions: "confirmReturn" }
        ],
        "operator.resumed": [
          {
            guard: "expiredWhilePaused",
            target: "expired",
            actions: ["resume", "emitExpired", "returnExpiredBalance"]
          },
          { guard: "pausedFromAwaitingPayer", target: "awaiting_payer", actions: "resume" },
          { guard: "fundedWhilePaused", target: "deposited", actions: ["resume", "commandSettlement"] },
          { guard: "pausedFromReady", target: "ready", actions: "resume" },
          { guard: "pausedFromPartial", target: "partially_deposited", actions: "resume" },
          { guard: "pausedFromDeposited", target: "deposited", actions: "resume" },
          {
            guard: "pausedFromSettled",
            target: "settled",
            actions: ["resume", "returnCreditsHeldWhilePaused"]
          },
          {
            guard: "pausedFromExpired",
            target: "expired",
            actions: ["resume", "returnCreditsHeldWhilePaused"]
          },
          {
            guard: "pausedFromReturned",
            target: "returned",
            actions: ["resume", "returnCreditsHeldWhilePaused"]
          }
        ]
      }
    }
  }
})
