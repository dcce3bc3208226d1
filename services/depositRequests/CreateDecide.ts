import { start, type Step } from "../../machines/step"
import { type DepositRequestRow, firstRow } from "../actors/ActorRow"
import { toId } from "../domain/PrefixedId"
import { type CreateInput, policyOf, uuidOfId } from "./CreateFields"

/** What a create decided: the actor's first step and the row that stores it, not yet written. */
export interface FirstStep {
  readonly row: DepositRequestRow
  readonly step: Step
}

/**
 * Decide: the new request's first step, from fields already validated and the payout address they name. Pure: the
 * actor host is not entered, as nothing is committed yet (the create's group commit writes the row).
 */
export const decideFirstStep = (
  uuid: string,
  accountId: string,
  input: CreateInput,
  now: Date,
  expiresAt: Date,
  payoutAddress: string
): FirstStep => {
  const policy = policyOf(input)
  const s = start({
    id: toId("dr", uuid),
    amount_base_units: input.amount.toString(),
    payout_address: payoutAddress,
    payer_policy_mode: policy,
    expires_at: expiresAt.toISOString(),
    created_at: now.toISOString()
  })
  const row = firstRow(
    {
      id: uuid,
      account_id: accountId,
      amount_base_units: input.amount.toString(),
      heading: input.heading ?? "",
      reference: input.reference ?? "",
      metadata: { ...(input.metadata ?? {}) },
      customer_id: input.customer_id === undefined ? null : uuidOfId(input.customer_id),
      issuer_id: uuidOfId(input.issuer_id),
      payout_address_id: uuidOfId(input.payout_address_id),
      payer_policy_mode: policy,
      expected_email: input.expected_email ?? null,
      payer_reference: input.payer_reference ?? null,
      return_url: input.return_url ?? null,
      deposit_index: null,
      deposit_address: null,
      expires_at: expiresAt,
      created_at: now
    },
    s
  )
  return { row, step: s }
}
