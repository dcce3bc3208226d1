import { assign, emit, enqueueActions, setup } from "xstate"
import type { DepositRequestStatus, PayerPolicyMode, RecoveryReason } from "../services/domain/Lifecycle"

/**
 * The deposit request lifecycle, pure: no I/O, no clock, no randomness. Time arrives in events (`at`, ISO 8601).
 * It decides and emits what must happen (lifecycle events for the merchant, commands for the services) and never
 * does it: the actor host persists the snapshot and what was emitted in one transaction, then acts.
 *
 * Top-level states are the API's `status` values. Everything else the API shows (received amount, likely
 * unsolicited, verification, wallet binding, recoveries, the attention object, settlement details) is a fact in
 * context beside the status. Amounts are base-unit strings with BigInt arithmetic only, so the snapshot stays JSON.
 *
 * Bump MACHINE_VERSION when a change alters the shape of persisted snapshots, and add the SQL migration that rewrites
 * the stored ones (infra/decisions/0021).
 */
export const MACHINE_VERSION = 1

export interface DepositRequestInput {
  readonly id: string
  /** Positive integer, digits only. */
  readonly amount_base_units: string
  readonly payout_address: string
  readonly payer_policy_mode: PayerPolicyMode
  readonly expires_at: string
  readonly created_at: string
}

export interface Recovery {
  /** The return command's id; the host derives the public `rec_` id from it deterministically. */
  readonly id: string
  readonly amount_base_units: string
  readonly reason: RecoveryReason
  readonly transaction_hash: string
  readonly block_number: string
  readonly recovered_at: string
}

/** Why automatic movement paused and what resumes it. `since` is when the pause began. */
export interface Attention {
  readonly code: string
  readonly message: string
  readonly since: string
  readonly resolution: string
}

export interface Settlement {
  readonly tx_hash: string
  readonly block_number: string
  readonly settled_at: string
}

/**
 * What the services must carry out. A command id is stable (derived from the request and what caused it), so a
 * re-emitted command is recognisable and the treasury never moves the same money twice.
 * - `settle`: send exactly the requested amount from the deposit address to the payout address (once per request).
 * - `return`: send an amount from the deposit address back to the payer's attested wallet.
 * - `retry`: carry out again an outstanding `settle`/`return` (same id, same signed transfer) after an operator
 *   resumed the request.
 */
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
  | { readonly kind: "command"; readonly type: "retry"; readonly command_id: string }

/** A transfer commanded and not yet confirmed. */
export type PendingCommand = Exclude<Command, { type: "retry" }>

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
  /**
   * Unique per request (the store holds a unique index on it): the type itself for the at-most-once types, the
   * return command's id for `deposit_request.recovered_funds`.
   */
  readonly dedupe: string
  readonly recovery?: Recovery
}

export type Emitted = LifecycleEvent | Command

/** The statuses a pause can come from: every one where money may move (not before an address exists). */
export type PausableStatus = Exclude<DepositRequestStatus, "awaiting_payer" | "needs_attention">

export interface HeldCredit {
  readonly credit_id: string
  readonly amount_base_units: string
}

export interface DepositRequestContext {
  readonly id: string
  readonly amount_base_units: string
  readonly payout_address: string
  readonly payer_policy_mode: PayerPolicyMode
  readonly expires_at: string
  readonly created_at: string
  /** Sum of every finalized credit ever seen, late ones included. Never decreases. */
  readonly received_base_units: string
  readonly credit_ids: ReadonlyArray<string>
  readonly verification_completed_at: string | null
  readonly likely_unsolicited_at: string | null
  readonly payer_wallet: string | null
  readonly address: string | null
  readonly wallet_bound_at: string | null
  readonly settle_commanded: boolean
  readonly settlement: Settlement | null
  /** Commanded and not yet confirmed; re-issued as `retry` when an operator resumes. */
  readonly pending: ReadonlyArray<PendingCommand>
  /** Base units commanded back to the payer so far (pending or confirmed). */
  readonly returning_base_units: string
  readonly recoveries: ReadonlyArray<Recovery>
  readonly attention: Attention | null
  /** needs_attention is raised at most once per request, however many pauses follow. */
  readonly attention_raised: boolean
  /** Where the current pause began; null when not paused. */
  readonly paused_from: PausableStatus | null
  /** The deadline passed during the current pause, before the request was funded. */
  readonly deadline_passed: boolean
  /** Credits recorded during the current pause; returned on resume when the request is already over. */
  readonly held_credits: ReadonlyArray<HeldCredit>
  /** Set when the merchant cancelled it before anything arrived (it then expired at once); absent otherwise. */
  readonly cancellation?: Cancellation
}

export interface Cancellation {
  readonly at: string
  readonly reason: string | null
}

export type DepositRequestEvent =
  | { readonly type: "payer.verified"; readonly at: string; readonly method: "mailbox" | "merchant_session" }
  | {
      readonly type: "payer.wallet_attested"
      readonly at: string
      readonly wallet: string
      /** The one-time deposit address released for this wallet. */
      readonly address: string
    }
  | {
      /** A finalized credit to the deposit address; `credit_id` is stable (chain, tx hash, log index). */
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
      /** The merchant ends a request nobody has paid: it expires at once, its reason kept. */
      readonly type: "merchant.cancelled"
      readonly at: string
      readonly reason: string | null
    }
  | {
      readonly type: "attention.raised"
      readonly at: string
      readonly code: string
      readonly message: string
      readonly resolution: string
    }
  | {
      readonly type: "operator.resumed"
      readonly at: string
      /**
       * A payout address to settle to instead (the old one is blocked by the token): an outstanding settlement is
       * commanded anew to it, under a new id.
       */
      readonly payout_address?: string
    }

const BASE_UNITS = /^[0-9]+$/
const add = (a: string, b: string) => (BigInt(a) + BigInt(b)).toString()
const sub = (a: string, b: string) => (BigInt(a) - BigInt(b)).toString()
const gte = (a: string, b: string) => BigInt(a) >= BigInt(b)
const positive = (a: string) => BigInt(a) > 0n
const sameAddress = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase()

const lifecycle = (type: LifecycleType): LifecycleEvent => ({ kind: "lifecycle", type, dedupe: type })

/** What is still at the deposit address and not yet commanded anywhere. */
const unallocated = (c: DepositRequestContext) =>
  sub(sub(c.received_base_units, c.settle_commanded ? c.amount_base_units : "0"), c.returning_base_units)

// The id names the request, the reason and what caused it, so the same cause always yields the same id.
const returnCommand = (
  c: DepositRequestContext,
  amount: string,
  reason: RecoveryReason,
  cause: string
): PendingCommand => ({
  kind: "command",
  type: "return",
  command_id: `return:${c.id}:${reason}:${cause}`,
  amount_base_units: amount,
  to: c.payer_wallet ?? "",
  reason
})

/**
 * The id of a settlement redirected to another payout address: the first is `settle:<id>:redirect:1`, each later
 * one counts on from the id it replaces. A new id, so the treasury signs a new authorization naming the new address
 * (under the same EIP-3009 nonce as the first: the token lets only one of them ever execute); the count lives in the
 * id, so the snapshot keeps its shape.
 */
export const redirectedSettleId = (requestId: string, replaced: string) => {
  const previous = replaced.startsWith(`settle:${requestId}:redirect:`)
    ? Number(replaced.slice(`settle:${requestId}:redirect:`.length))
    : 0
  return `settle:${requestId}:redirect:${previous + 1}`
}

const pausedFromOneOf =
  (...from: ReadonlyArray<PausableStatus>) =>
  ({ context }: { context: DepositRequestContext }) =>
    context.paused_from !== null && from.includes(context.paused_from)

/** Not seen before, a positive integer, and to an address that exists (a wallet is bound). */
const isNewCredit = (
  c: DepositRequestContext,
  e: DepositRequestEvent
): e is Extract<DepositRequestEvent, { type: "deposit.credited" }> =>
  e.type === "deposit.credited" &&
  c.payer_wallet !== null &&
  BASE_UNITS.test(e.amount_base_units) &&
  positive(e.amount_base_units) &&
  !c.credit_ids.includes(e.credit_id)

const pendingReturn = (c: DepositRequestContext, commandId: string) =>
  c.pending.find(
    (p): p is Extract<PendingCommand, { type: "return" }> => p.command_id === commandId && p.type === "return"
  )

/**
 * A new request's context: its input and every fact still empty. A spread on purpose: built field by field, new
 * contexts took other hidden classes than restored ones and every later step got slower (decision 0023).
 */
export const initialContext = (input: DepositRequestInput): DepositRequestContext => ({
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
  deadline_passed: false,
  held_credits: []
})

export const depositRequestMachine = setup({
  types: {
    context: {} as DepositRequestContext,
    events: {} as DepositRequestEvent,
    input: {} as DepositRequestInput,
    emitted: {} as Emitted
  },
  guards: {
    /** The proof the policy asks for, the first time it arrives. */
    policyProofSatisfied: ({ context, event }) =>
      event.type === "payer.verified" &&
      context.payer_policy_mode === event.method &&
      context.verification_completed_at === null,
    /** The address is released only once the policy is satisfied. */
    payerVerified: ({ context }) =>
      context.payer_policy_mode === "none" || context.verification_completed_at !== null,
    newCredit: ({ context, event }) => isNewCredit(context, event),
    /**
     * Seen at or after the deadline while the request is still open: the deadline's sweep has not reached it yet
     * (it runs every second, and not at all while no instance holds its lease). The same line the sweep draws, so a
     * payment is late by when it was seen, not by which of the two steps came first.
     */
    creditAfterDeadline: ({ context, event }) =>
      isNewCredit(context, event) && Date.parse(event.at) >= Date.parse(context.expires_at),
    newCreditFundsRequest: ({ context, event }) =>
      isNewCredit(context, event) &&
      gte(add(context.received_base_units, event.amount_base_units), context.amount_base_units),
    addressReleased: ({ context }) => context.address !== null,
    settlementPending: ({ context }) => context.pending.some((p) => p.type === "settle"),
    returnPending: ({ context, event }) =>
      event.type === "return.confirmed" && pendingReturn(context, event.command_id) !== undefined,
    expiredBalanceReturnPending: ({ context, event }) =>
      event.type === "return.confirmed" &&
      pendingReturn(context, event.command_id)?.reason === "expired_balance",
    /** While paused, the deadline counts only if the request was not funded first. */
    deadlineBeforeFunding: ({ context }) =>
      (context.paused_from === "ready" || context.paused_from === "partially_deposited") &&
      !gte(context.received_base_units, context.amount_base_units),
    // The resume guards pick where a pause ends, given what happened during it (checked in order).
    expiredWhilePaused: ({ context }) => context.deadline_passed,
    fundedWhilePaused: ({ context }) =>
      pausedFromOneOf("ready", "partially_deposited")({ context }) &&
      gte(context.received_base_units, context.amount_base_units),
    partlyFundedWhilePaused: ({ context }) =>
      pausedFromOneOf("ready", "partially_deposited")({ context }) && positive(context.received_base_units),
    pausedFromReady: pausedFromOneOf("ready"),
    settledWhilePaused: ({ context }) => context.paused_from === "deposited" && context.settlement !== null,
    pausedFromDeposited: pausedFromOneOf("deposited"),
    pausedFromSettled: pausedFromOneOf("settled"),
    returnedWhilePaused: ({ context }) =>
      context.paused_from === "expired" && context.recoveries.some((r) => r.reason === "expired_balance"),
    pausedFromExpired: pausedFromOneOf("expired"),
    pausedFromReturned: pausedFromOneOf("returned")
  },
  actions: {
    markVerified: enqueueActions(({ event, enqueue }) => {
      if (event.type !== "payer.verified") return
      enqueue.assign({ verification_completed_at: event.at })
      enqueue.emit(lifecycle("verification.approved"))
    }),
    bindWallet: enqueueActions(({ event, enqueue }) => {
      if (event.type !== "payer.wallet_attested") return
      enqueue.assign({ payer_wallet: event.wallet, address: event.address, wallet_bound_at: event.at })
      enqueue.emit(lifecycle("deposit_request.ready"))
    }),
    /**
     * Counts a credit towards the request. The first credit from a wallet other than the attested one marks the
     * request likely unsolicited (late transfers after the end do not: they are returned anyway).
     */
    recordCredit: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "deposit.credited") return
      enqueue.assign({
        received_base_units: add(context.received_base_units, event.amount_base_units),
        credit_ids: [...context.credit_ids, event.credit_id]
      })
      const counts =
        context.paused_from === null ||
        context.paused_from === "ready" ||
        context.paused_from === "partially_deposited" ||
        context.paused_from === "deposited"
      if (
        counts &&
        context.likely_unsolicited_at === null &&
        !sameAddress(context.payer_wallet, event.from)
      ) {
        enqueue.assign({ likely_unsolicited_at: event.at })
        enqueue.emit(lifecycle("deposit_request.likely_unsolicited"))
      }
    }),
    /** A credit during a pause: recorded now, acted on when an operator resumes. */
    holdCredit: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "deposit.credited") return
      enqueue.assign({
        held_credits: [
          ...context.held_credits,
          { credit_id: event.credit_id, amount_base_units: event.amount_base_units }
        ]
      })
    }),
    /** Funded: settle exactly the amount, once; any excess is returned after the settlement lands. */
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
    recordSettlement: assign(({ context, event }) =>
      event.type === "settlement.confirmed"
        ? {
            settlement: { tx_hash: event.tx_hash, block_number: event.block_number, settled_at: event.at },
            pending: context.pending.filter((p) => p.type !== "settle")
          }
        : {}
    ),
    emitSettled: emit(lifecycle("deposit_request.settled")),
    /** After settlement, whatever came in beyond the amount goes back to the payer, as one return. */
    returnOverpayment: enqueueActions(({ context, enqueue }) => {
      const remainder = unallocated(context)
      if (!positive(remainder)) return
      const back = returnCommand(context, remainder, "overpayment", "remainder")
      enqueue.assign({
        pending: [...context.pending, back],
        returning_base_units: add(context.returning_base_units, remainder)
      })
      enqueue.emit(back)
    }),
    /** A transfer arriving after the request is over goes straight back, on its own. */
    returnLateCredit: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "deposit.credited") return
      const back = returnCommand(context, event.amount_base_units, "late_transfer", event.credit_id)
      enqueue.assign({
        received_base_units: add(context.received_base_units, event.amount_base_units),
        credit_ids: [...context.credit_ids, event.credit_id],
        pending: [...context.pending, back],
        returning_base_units: add(context.returning_base_units, event.amount_base_units)
      })
      enqueue.emit(back)
    }),
    /** Resumed into a request that is over: each credit held during the pause is a late transfer. */
    returnHeldCredits: enqueueActions(({ context, enqueue }) => {
      let pending = context.pending
      let returning = context.returning_base_units
      for (const held of context.held_credits) {
        const back = returnCommand(context, held.amount_base_units, "late_transfer", held.credit_id)
        pending = [...pending, back]
        returning = add(returning, held.amount_base_units)
        enqueue.emit(back)
      }
      enqueue.assign({ pending, returning_base_units: returning, held_credits: [] })
    }),
    emitExpired: emit(lifecycle("deposit_request.expired")),
    recordCancellation: assign(({ event }) =>
      event.type === "merchant.cancelled" ? { cancellation: { at: event.at, reason: event.reason } } : {}
    ),
    /** Expired with funds: the whole balance goes back. */
    returnExpiredBalance: enqueueActions(({ context, enqueue }) => {
      const balance = unallocated(context)
      if (!positive(balance)) return
      const back = returnCommand(context, balance, "expired_balance", "balance")
      enqueue.assign({
        pending: [...context.pending, back],
        returning_base_units: add(context.returning_base_units, balance)
      })
      enqueue.emit(back)
    }),
    /** Every confirmed return is a recovery ledger entry and its own recovered_funds event. */
    confirmReturn: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "return.confirmed") return
      const done = pendingReturn(context, event.command_id)
      if (done === undefined) return
      const recovery: Recovery = {
        id: done.command_id,
        amount_base_units: done.amount_base_units,
        reason: done.reason,
        transaction_hash: event.tx_hash,
        block_number: event.block_number,
        recovered_at: event.at
      }
      enqueue.assign({
        pending: context.pending.filter((p) => p.command_id !== done.command_id),
        recoveries: [...context.recoveries, recovery]
      })
      enqueue.emit({
        kind: "lifecycle",
        type: "deposit_request.recovered_funds",
        dedupe: done.command_id,
        recovery
      })
    }),
    emitReturned: emit(lifecycle("deposit_request.returned")),
    /** Pauses automatic movement; the merchant hears of it once per request, however many pauses follow. */
    pause: enqueueActions(({ context, event, enqueue }, params: { from: PausableStatus }) => {
      if (event.type !== "attention.raised") return
      enqueue.assign({
        attention: {
          code: event.code,
          message: event.message,
          since: event.at,
          resolution: event.resolution
        },
        attention_raised: true,
        paused_from: params.from,
        deadline_passed: false,
        held_credits: []
      })
      if (!context.attention_raised) enqueue.emit(lifecycle("deposit_request.needs_attention"))
    }),
    /** A further problem during a pause replaces the description; the pause keeps its start. */
    updateAttention: assign(({ context, event }) =>
      event.type === "attention.raised"
        ? {
            attention: {
              code: event.code,
              message: event.message,
              since: context.attention?.since ?? event.at,
              resolution: event.resolution
            }
          }
        : {}
    ),
    markDeadlinePassed: assign({ deadline_passed: true }),
    /**
     * Runs first on resume. A resume to another payout address: the request settles there from now on, and an
     * outstanding settlement is replaced by a new one to it, under a new id (never retried: its signed
     * authorization names the old address).
     */
    redirectSettlement: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "operator.resumed" || event.payout_address === undefined) return
      if (context.settlement !== null) return
      const to = event.payout_address
      const pending = context.pending.map(
        (p): PendingCommand =>
          p.type === "settle" ? { ...p, command_id: redirectedSettleId(context.id, p.command_id), to } : p
      )
      enqueue.assign({ payout_address: to, pending })
      for (const p of pending) if (p.type === "settle") enqueue.emit(p)
    }),
    /**
     * Outstanding transfers are carried out again under their own ids: never a second transfer. A settlement
     * `redirectSettlement` just commanded anew is not retried.
     */
    retryOutstanding: enqueueActions(({ context, event, enqueue }) => {
      const redirected = event.type === "operator.resumed" && event.payout_address !== undefined
      for (const p of context.pending) {
        if (redirected && p.type === "settle" && context.settlement === null) continue
        enqueue.emit({ kind: "command", type: "retry", command_id: p.command_id })
      }
    }),
    /** Runs last on resume, after the actions that read what the pause recorded. */
    endPause: assign({ attention: null, paused_from: null, deadline_passed: false, held_credits: [] })
  }
}).createMachine({
  id: "depositRequest",
  context: ({ input }) => initialContext(input),
  initial: "awaiting_payer",
  states: {
    // No address exists yet, so no money can arrive; attention has nothing to pause here.
    awaiting_payer: {
      on: {
        "payer.verified": { guard: "policyProofSatisfied", actions: "markVerified" },
        "payer.wallet_attested": { guard: "payerVerified", target: "ready", actions: "bindWallet" },
        "deadline.reached": { target: "expired", actions: "emitExpired" },
        "merchant.cancelled": { target: "expired", actions: ["recordCancellation", "emitExpired"] }
      }
    },
    ready: {
      on: {
        "deposit.credited": [
          { guard: "creditAfterDeadline", target: "expired", actions: ["emitExpired", "returnLateCredit"] },
          {
            guard: "newCreditFundsRequest",
            target: "deposited",
            actions: ["recordCredit", "commandSettlement"]
          },
          { guard: "newCredit", target: "partially_deposited", actions: "recordCredit" }
        ],
        "deadline.reached": { target: "expired", actions: "emitExpired" },
        // Nothing has arrived in `ready` (a credit moves it on): a late transfer is returned as in `expired`.
        "merchant.cancelled": { target: "expired", actions: ["recordCancellation", "emitExpired"] },
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
            guard: "creditAfterDeadline",
            target: "expired",
            actions: ["emitExpired", "returnExpiredBalance", "returnLateCredit"]
          },
          {
            guard: "newCreditFundsRequest",
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
    // Funded: the deadline no longer applies. Credits before the settlement lands join the overpayment remainder.
    deposited: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: "recordCredit" },
        "settlement.confirmed": {
          guard: "settlementPending",
          target: "settled",
          actions: ["recordSettlement", "emitSettled", "returnOverpayment"]
        },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "deposited" } }
        }
      }
    },
    // Stays settled while remainders and late transfers go back.
    settled: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: "returnLateCredit" },
        "return.confirmed": { guard: "returnPending", actions: "confirmReturn" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "settled" } }
        }
      }
    },
    expired: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: "returnLateCredit" },
        "return.confirmed": [
          {
            guard: "expiredBalanceReturnPending",
            target: "returned",
            actions: ["confirmReturn", "emitReturned"]
          },
          { guard: "returnPending", actions: "confirmReturn" }
        ],
        // Expired before any address existed: no money can move, so there is nothing to pause.
        "attention.raised": {
          guard: "addressReleased",
          target: "needs_attention",
          actions: { type: "pause", params: { from: "expired" } }
        }
      }
    },
    returned: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: "returnLateCredit" },
        "return.confirmed": { guard: "returnPending", actions: "confirmReturn" },
        "attention.raised": {
          target: "needs_attention",
          actions: { type: "pause", params: { from: "returned" } }
        }
      }
    },
    /**
     * Automatic movement paused. Facts still arrive and are recorded (credits, confirmations of transfers already
     * under way, the deadline); what they would trigger (a settlement, a return, a status change and its event)
     * waits for `operator.resumed`, which picks the status the request has earned in the meantime.
     */
    needs_attention: {
      on: {
        "deposit.credited": { guard: "newCredit", actions: ["recordCredit", "holdCredit"] },
        "deadline.reached": { guard: "deadlineBeforeFunding", actions: "markDeadlinePassed" },
        "attention.raised": { actions: "updateAttention" },
        "settlement.confirmed": { guard: "settlementPending", actions: "recordSettlement" },
        "return.confirmed": { guard: "returnPending", actions: "confirmReturn" },
        "operator.resumed": [
          {
            guard: "expiredWhilePaused",
            target: "expired",
            actions: [
              "redirectSettlement",
              "retryOutstanding",
              "emitExpired",
              "returnExpiredBalance",
              "endPause"
            ]
          },
          {
            guard: "fundedWhilePaused",
            target: "deposited",
            actions: ["redirectSettlement", "retryOutstanding", "commandSettlement", "endPause"]
          },
          {
            guard: "partlyFundedWhilePaused",
            target: "partially_deposited",
            actions: ["redirectSettlement", "retryOutstanding", "endPause"]
          },
          {
            guard: "pausedFromReady",
            target: "ready",
            actions: ["redirectSettlement", "retryOutstanding", "endPause"]
          },
          {
            guard: "settledWhilePaused",
            target: "settled",
            actions: [
              "redirectSettlement",
              "retryOutstanding",
              "emitSettled",
              "returnOverpayment",
              "endPause"
            ]
          },
          {
            guard: "pausedFromDeposited",
            target: "deposited",
            actions: ["redirectSettlement", "retryOutstanding", "endPause"]
          },
          {
            guard: "pausedFromSettled",
            target: "settled",
            actions: ["redirectSettlement", "retryOutstanding", "returnHeldCredits", "endPause"]
          },
          {
            guard: "returnedWhilePaused",
            target: "returned",
            actions: [
              "redirectSettlement",
              "retryOutstanding",
              "emitReturned",
              "returnHeldCredits",
              "endPause"
            ]
          },
          {
            guard: "pausedFromExpired",
            target: "expired",
            actions: ["redirectSettlement", "retryOutstanding", "returnHeldCredits", "endPause"]
          },
          {
            guard: "pausedFromReturned",
            target: "returned",
            actions: ["redirectSettlement", "retryOutstanding", "returnHeldCredits", "endPause"]
          }
        ]
      }
    }
  }
})
