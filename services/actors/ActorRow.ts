import { MACHINE_VERSION } from "../../machines/DepositRequest"
import type { DepositRequestContext, Step } from "../../machines/step"
import type { DepositRequestStatus } from "../domain/Lifecycle"

/** A deposit request row as stored (merchant fields and the queryable mirror of the machine's facts). */
export interface DepositRequestRow {
  readonly id: string
  readonly account_id: string
  readonly status: string
  readonly version: string
  readonly machine_version: number
  readonly snapshot: unknown
  readonly amount_base_units: string
  readonly received_base_units: string
  readonly heading: string
  readonly reference: string
  readonly metadata: Record<string, string>
  readonly customer_id: string | null
  readonly issuer_id: string
  readonly payout_address_id: string
  readonly payer_policy_mode: "none" | "mailbox" | "merchant_session"
  readonly expected_email: string | null
  readonly payer_reference: string | null
  /** Where the hosted checkout links the payer back to the merchant; null when the merchant gave none. */
  readonly return_url: string | null
  readonly deposit_index: number | null
  readonly deposit_address: string | null
  readonly expires_at: Date
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * The columns a `DepositRequestRow` is read from, by name: `select *` would also bring the merchant session's
 * secret digest into every row the host holds in memory. `actorRowTypes.test.ts` holds these and their types to
 * the schema.
 */
export const depositRequestColumns = [
  "id",
  "account_id",
  "status",
  "version",
  "machine_version",
  "snapshot",
  "amount_base_units",
  "received_base_units",
  "heading",
  "reference",
  "metadata",
  "customer_id",
  "issuer_id",
  "payout_address_id",
  "payer_policy_mode",
  "expected_email",
  "payer_reference",
  "return_url",
  "deposit_index",
  "deposit_address",
  "expires_at",
  "created_at",
  "updated_at"
] as const satisfies ReadonlyArray<keyof DepositRequestRow>

// Every field of the row is a column read: a field added to the interface without its column fails here.
type Unread = Exclude<keyof DepositRequestRow, (typeof depositRequestColumns)[number]>
const everyFieldRead: [Unread] extends [never] ? true : Unread = true
void everyFieldRead

/** What a new request's first row holds that its machine does not decide: the merchant's fields. */
export type FirstRowFields = Omit<
  DepositRequestRow,
  "status" | "version" | "machine_version" | "snapshot" | "received_base_units" | "updated_at"
>

/** Where an actor is, read from its row without stepping it: what views of a stored request need. */
export interface SnapshotView {
  readonly status: DepositRequestStatus
  readonly context: DepositRequestContext
}

/** The one place a stored snapshot is read: `step` wrote it, so its `context` is the machine's. */
const contextOf = (snapshot: unknown): DepositRequestContext => {
  if (typeof snapshot !== "object" || snapshot === null || !("context" in snapshot)) {
    throw new Error("a deposit request row holds a snapshot without a context")
  }
  return snapshot.context as DepositRequestContext
}

/** The row's status column mirrors the machine's top-level state, which `step` keeps to the status list. */
export const snapshotOf = (row: DepositRequestRow): SnapshotView => ({
  status: row.status as DepositRequestStatus,
  context: contextOf(row.snapshot)
})

/** The row that stores a request's first step, not yet written. */
export const firstRow = (fields: FirstRowFields, s: Step): DepositRequestRow => ({
  // Field by field rather than `{ ...fields, … }`: properties added after a spread are slow (README: Decisions).
  id: fields.id,
  account_id: fields.account_id,
  amount_base_units: fields.amount_base_units,
  heading: fields.heading,
  reference: fields.reference,
  metadata: fields.metadata,
  customer_id: fields.customer_id,
  issuer_id: fields.issuer_id,
  payout_address_id: fields.payout_address_id,
  payer_policy_mode: fields.payer_policy_mode,
  expected_email: fields.expected_email,
  payer_reference: fields.payer_reference,
  return_url: fields.return_url,
  deposit_index: fields.deposit_index,
  deposit_address: fields.deposit_address,
  expires_at: fields.expires_at,
  created_at: fields.created_at,
  status: s.status,
  version: "1",
  machine_version: MACHINE_VERSION,
  snapshot: s.snapshot,
  received_base_units: String(s.context.received_base_units ?? "0"),
  updated_at: fields.created_at
})

/** The row after one step from `before`, stamped `at`: one version on, the machine's facts mirrored. */
export const nextRow = (before: DepositRequestRow, s: Step, at: Date): DepositRequestRow => ({
  id: before.id,
  account_id: before.account_id,
  status: s.status,
  version: (BigInt(before.version) + 1n).toString(),
  machine_version: before.machine_version,
  snapshot: s.snapshot,
  amount_base_units: before.amount_base_units,
  received_base_units: String(s.context.received_base_units ?? "0"),
  heading: before.heading,
  reference: before.reference,
  metadata: before.metadata,
  customer_id: before.customer_id,
  issuer_id: before.issuer_id,
  payout_address_id: before.payout_address_id,
  payer_policy_mode: before.payer_policy_mode,
  expected_email: before.expected_email,
  payer_reference: before.payer_reference,
  return_url: before.return_url,
  deposit_index: before.deposit_index,
  deposit_address: typeof s.context.address === "string" ? s.context.address : before.deposit_address,
  expires_at: before.expires_at,
  created_at: before.created_at,
  updated_at: at
})
