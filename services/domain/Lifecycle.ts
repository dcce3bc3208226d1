import { Schema } from "effect"

/**
 * The deposit request statuses: the top-level states of the lifecycle machine. `machines/step.ts` holds the two
 * to the same set at compile time (`sameStatuses`), so they cannot drift apart.
 */
export const depositRequestStatuses = [
  "awaiting_payer",
  "ready",
  "partially_deposited",
  "deposited",
  "settled",
  "expired",
  "returned",
  "needs_attention"
] as const
export type DepositRequestStatus = (typeof depositRequestStatuses)[number]
export const DepositRequestStatus = Schema.Literal(...depositRequestStatuses)

/** How a payer proves they may attest a wallet for a request. */
export const payerPolicyModes = ["none", "mailbox", "merchant_session"] as const
export type PayerPolicyMode = (typeof payerPolicyModes)[number]
export const PayerPolicyMode = Schema.Literal(...payerPolicyModes)

/** Why money goes back to a payer. */
export const recoveryReasons = ["overpayment", "expired_balance", "late_transfer"] as const
export type RecoveryReason = (typeof recoveryReasons)[number]

/**
 * The lifecycle event types fanned out to every subscribed endpoint (the spec's table but `webhook.test`, which goes
 * to the one endpoint it was sent to): what an endpoint's `enabled_events` may name.
 */
export const subscribableEventTypes = [
  "deposit_request.ready",
  "verification.approved",
  "deposit_request.deposited",
  "deposit_request.settled",
  "deposit_request.expired",
  "deposit_request.returned",
  "deposit_request.recovered_funds",
  "deposit_request.likely_unsolicited",
  "deposit_request.needs_attention"
] as const
export type SubscribableEventType = (typeof subscribableEventTypes)[number]
