import { v5 as uuidv5 } from "uuid"
import type { Recovery } from "../../machines/DepositRequest"
import type { LifecycleEvent, Step } from "../../machines/step"
import { type DepositRequestRow, type SnapshotView, snapshotOf } from "../actors/ActorRow"
import { formatAmount } from "../domain/Amount"
import { formatTimestamp } from "../domain/Timestamp"
import { toId } from "../domain/PrefixedId"
import type { webhookFields } from "./WebhookFields"

export { webhookFields } from "./WebhookFields"

export type { DepositRequestRow } from "../actors/ActorRow"

/** What the lifecycle machine knows that the API shows. */
export interface LifecycleFacts {
  readonly status: SnapshotView["status"]
  readonly receivedBaseUnits: string
  readonly verificationCompletedAt: string | null
  readonly likelyUnsolicitedAt: string | null
  readonly payerWallet: string | null
  readonly address: string | null
  readonly walletBoundAt: string | null
  readonly attention: { code: string; message: string; since: string; resolution: string } | null
  readonly settlement: {
    readonly payoutAddress: string
    readonly amountBaseUnits: string
    readonly transactionHash: string | null
    readonly blockNumber: string | null
    readonly settledAt: string | null
  } | null
  readonly cancellation: { readonly at: string; readonly reason: string | null } | null
}

const isoSeconds = (iso: string | null) => (iso === null ? null : formatTimestamp(new Date(iso)))

/** The merchant's view of a request, in wire form (strings for amounts, RFC 3339 seconds, EIP-55). */
export const toWire = (
  row: DepositRequestRow,
  facts: LifecycleFacts,
  chainId: number,
  publicBaseUrl: string
) => ({
  id: toId("dr", row.id) as string,
  status: facts.status,
  amount: formatAmount(BigInt(row.amount_base_units)),
  amount_base_units: BigInt(row.amount_base_units).toString(),
  received: formatAmount(BigInt(facts.receivedBaseUnits)),
  received_base_units: BigInt(facts.receivedBaseUnits).toString(),
  heading: row.heading,
  reference: row.reference,
  metadata: row.metadata,
  customer_id: row.customer_id === null ? null : (toId("cus", row.customer_id) as string),
  issuer_id: toId("iss", row.issuer_id) as string,
  payer_policy_mode: row.payer_policy_mode,
  payer_reference: row.payer_reference,
  verification_completed_at: isoSeconds(facts.verificationCompletedAt),
  likely_unsolicited_at: isoSeconds(facts.likelyUnsolicitedAt),
  payer_wallet: facts.payerWallet,
  address: facts.address,
  wallet_bound_at: isoSeconds(facts.walletBoundAt),
  expires_at: formatTimestamp(row.expires_at),
  created_at: formatTimestamp(row.created_at),
  payout_address_id: toId("pa", row.payout_address_id) as string,
  expected_email: row.expected_email,
  return_url: row.return_url,
  attention: facts.attention && {
    ...facts.attention,
    since: formatTimestamp(new Date(facts.attention.since))
  },
  settlement: facts.settlement && {
    payout_address: facts.settlement.payoutAddress,
    amount: formatAmount(BigInt(facts.settlement.amountBaseUnits)),
    amount_base_units: facts.settlement.amountBaseUnits,
    transaction_hash: facts.settlement.transactionHash,
    block_number: facts.settlement.blockNumber,
    settled_at: isoSeconds(facts.settlement.settledAt)
  },
  cancellation: facts.cancellation && {
    reason: facts.cancellation.reason,
    cancelled_at: formatTimestamp(new Date(facts.cancellation.at))
  },
  chain_id: chainId,
  /** The hosted checkout of this request: send the payer here. */
  checkout_url: `${publicBaseUrl}/checkout/${toId("dr", row.id)}`,
  version: row.version,
  updated_at: formatTimestamp(row.updated_at)
})

export type DepositRequestWire = ReturnType<typeof toWire>

/**
 * `webhookFields` of the wire form, in that order. Written out rather than built from the list: a literal has one
 * hidden class that JSON.stringify walks fast, where `Object.fromEntries` made pairs and a dictionary for every
 * lifecycle event (a block's funding credits each build a body on the commit's critical path). A test holds
 * the keys equal to the list.
 */
export const webhookSubset = (
  wire: DepositRequestWire
): Pick<DepositRequestWire, (typeof webhookFields)[number]> => ({
  id: wire.id,
  status: wire.status,
  amount: wire.amount,
  amount_base_units: wire.amount_base_units,
  received: wire.received,
  received_base_units: wire.received_base_units,
  heading: wire.heading,
  reference: wire.reference,
  metadata: wire.metadata,
  customer_id: wire.customer_id,
  issuer_id: wire.issuer_id,
  payer_policy_mode: wire.payer_policy_mode,
  payer_reference: wire.payer_reference,
  verification_completed_at: wire.verification_completed_at,
  likely_unsolicited_at: wire.likely_unsolicited_at,
  payer_wallet: wire.payer_wallet,
  address: wire.address,
  wallet_bound_at: wire.wallet_bound_at,
  expires_at: wire.expires_at,
  created_at: wire.created_at
})

/** The machine's context as the API shows it. One adapter, so the view never reaches into machine internals. */
const textOrNull = (v: unknown) => (typeof v === "string" ? v : null)

export const lifecycleFactsOf = (s: SnapshotView): LifecycleFacts => {
  const c = s.context as SnapshotView["context"] & Record<string, unknown>
  const attention = c.attention as LifecycleFacts["attention"] | undefined
  const settlement = c.settlement as
    | { tx_hash?: string | null; block_number?: string | null; settled_at?: string | null }
    | null
    | undefined
  return {
    status: s.status,
    receivedBaseUnits: String(c.received_base_units ?? "0"),
    verificationCompletedAt: textOrNull(c.verification_completed_at),
    likelyUnsolicitedAt: textOrNull(c.likely_unsolicited_at),
    payerWallet: textOrNull(c.payer_wallet),
    address: textOrNull(c.address),
    walletBoundAt: textOrNull(c.wallet_bound_at),
    attention: attention ?? null,
    cancellation: (c.cancellation as LifecycleFacts["cancellation"] | undefined) ?? null,
    settlement:
      s.status === "deposited" || s.status === "settled" || settlement
        ? {
            payoutAddress: String(c.payout_address ?? ""),
            amountBaseUnits: String(c.amount_base_units ?? "0"),
            transactionHash: settlement?.tx_hash ?? null,
            blockNumber: settlement?.block_number ?? null,
            settledAt: settlement?.settled_at ?? null
          }
        : null
  }
}

// Recovery ids are derived from the return's command id, so the same return always has the same `rec_` id.
const RECOVERY_NAMESPACE = "6f1d2c3a-9b8e-4f7a-8c5d-2e1f0a9b8c7d"

/** A recovery ledger entry on the wire: a `rec_` id, decimal and base-unit amounts, second-precision time. */
export const recoveryWire = (r: Recovery) => ({
  id: toId("rec", uuidv5(r.id, RECOVERY_NAMESPACE)) as string,
  amount: formatAmount(BigInt(r.amount_base_units)),
  amount_base_units: r.amount_base_units,
  reason: r.reason,
  transaction_hash: r.transaction_hash,
  block_number: r.block_number,
  recovered_at: formatTimestamp(new Date(r.recovered_at))
})

/** The merchant's view of a stored request (its machine read back from the row, not stepped). */
export const viewOf = (row: DepositRequestRow, chainId: number, publicBaseUrl: string): DepositRequestWire =>
  toWire(row, lifecycleFactsOf(snapshotOf(row)), chainId, publicBaseUrl)

/**
 * The webhook bodies of the lifecycle events one committed step emitted: the step's wire view is built once, and
 * each body carries its `webhookFields` (and the recovery a `recovered_funds` event reports).
 */
export const lifecycleBodiesOf =
  (chainId: number, publicBaseUrl: string) => (row: DepositRequestRow, s: Step) => {
    const wire = toWire(row, lifecycleFactsOf(s), chainId, publicBaseUrl)
    const subset = webhookSubset(wire)
    return (eventId: string, event: LifecycleEvent, at: Date): string => {
      const data: Record<string, unknown> = { deposit_request: subset }
      if (event.recovery !== undefined) data.recovery = recoveryWire(event.recovery)
      // The spec: the pause's payload carries the same attention object the API shows.
      if (event.type === "deposit_request.needs_attention") data.attention = wire.attention
      return JSON.stringify({
        id: toId("evt", eventId),
        type: event.type,
        occurred_at: formatTimestamp(at),
        data
      })
    }
  }
