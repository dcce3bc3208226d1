import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { getAddress } from "viem"
import type { DepositRequestContext, Recovery } from "../../machines/DepositRequest"
import { type ChainSettings, chainSettings } from "../chain/ChainSettings"
import type { DepositRequestRow } from "../depositRequests/DepositRequestWire"
import { lifecycleFactsOf } from "../depositRequests/DepositRequestWire"
import { formatAmount } from "../domain/Amount"
import { chainIdOf } from "../domain/Environment"
import { NotFound } from "../domain/Errors"
import { toId } from "../domain/PrefixedId"
import { formatTimestamp } from "../domain/Timestamp"
import { Attachments } from "../merchants/Attachments"
import { attestationDomain, attestationTypes } from "./WalletAttestation"

export type PayerRow = DepositRequestRow & {
  issuer_name: string | null
  issuer_support_email: string | null
  issuer_support_url: string | null
  merchant_session_secret_digest: Uint8Array | null
}

/** Whether the request still waits for the payer policy's proof, with the lifecycle facts it was read from. */
export const proofOwed = (row: PayerRow) => {
  const facts = lifecycleFactsOf({
    snapshot: row.snapshot,
    status: row.status,
    context: (row.snapshot as { context: never }).context,
    emitted: []
  } as never)
  const owed =
    row.status === "awaiting_payer" &&
    row.payer_policy_mode !== "none" &&
    facts.verificationCompletedAt === null
  return { facts, owed }
}

/**
 * The payer's receipt once settled: the amount, when, and every transaction that paid it, in full. A credit id is
 * `chain:tx_hash:log_index`; one transaction can carry several credits, so hashes are listed once each.
 */
const receiptOf = (context: Partial<DepositRequestContext> | undefined) => {
  const settlement = context?.settlement ?? null
  if (settlement === null) return null
  const hashes = (context?.credit_ids ?? []).map((id) => id.split(":")[1] ?? "").filter((h) => h !== "")
  return {
    amount: formatAmount(BigInt(context?.amount_base_units ?? "0")),
    amount_base_units: BigInt(context?.amount_base_units ?? "0").toString(),
    paid_at: formatTimestamp(new Date(settlement.settled_at)),
    transaction_hashes: [...new Set(hashes)]
  }
}

/** The payer-safe view: enough to pay and follow, never metadata, reference, expected email or payer reference. */
export const payerViewOf = (row: PayerRow, config: Pick<ChainSettings, "serviceEnv" | "tokenAddress">) => {
  const chainId = chainIdOf(config.serviceEnv)
  const { facts, owed } = proofOwed(row)
  const id = toId("dr", row.id) as string
  const address = facts.address
  const token = Option.getOrNull(config.tokenAddress)
  const walletOwed = row.status === "awaiting_payer" && !owed
  return {
    id,
    status: facts.status,
    amount: formatAmount(BigInt(row.amount_base_units)),
    amount_base_units: BigInt(row.amount_base_units).toString(),
    received: formatAmount(BigInt(facts.receivedBaseUnits)),
    received_base_units: BigInt(facts.receivedBaseUnits).toString(),
    heading: row.heading,
    issuer_display_name: row.issuer_name,
    issuer_support_email: row.issuer_support_email,
    issuer_support_url: row.issuer_support_url,
    return_url: row.return_url,
    payer_policy_mode: row.payer_policy_mode,
    proof_required: owed ? row.payer_policy_mode : null,
    wallet_required: walletOwed,
    chain_id: chainId,
    token_address: token === null ? null : getAddress(token),
    address,
    payment_link:
      address !== null && token !== null
        ? `ethereum:${getAddress(token)}@${chainId}/transfer?address=${address}&uint256=${BigInt(row.amount_base_units) - BigInt(facts.receivedBaseUnits)}`
        : null,
    attestation: walletOwed
      ? {
          domain: attestationDomain(chainId),
          types: attestationTypes,
          primary_type: "WalletAttestation",
          message: { depositRequest: id, chainId }
        }
      : null,
    expires_at: formatTimestamp(row.expires_at),
    version: row.version,
    receipt: receiptOf((row.snapshot as { context?: Partial<DepositRequestContext> }).context),
    // What came back to the payer: theirs to see (amount, why, the transaction), never merchant-private.
    returns: (
      (row.snapshot as { context?: { recoveries?: ReadonlyArray<Recovery> } }).context?.recoveries ?? []
    ).map((r) => ({
      amount: formatAmount(BigInt(r.amount_base_units)),
      amount_base_units: r.amount_base_units,
      reason: r.reason,
      transaction_hash: r.transaction_hash,
      returned_at: formatTimestamp(new Date(r.recovered_at))
    }))
  }
}

/**
 * The payer's reads of a request. No credential: the unguessable
 * request id is the capability, and nothing private to the merchant is shown.
 */
export class PayerView extends Effect.Service<PayerView>()("deposits/PayerView", {
  dependencies: [Attachments.Default],
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const config = yield* chainSettings
    const attachments = yield* Attachments

    const load = (uuid: string) =>
      sql<PayerRow>`
        select d.*, i.display_name as issuer_name, i.support_email as issuer_support_email,
          i.support_url as issuer_support_url
        from deposit_requests d
        left join issuers i on i.id = d.issuer_id
        where d.id = ${uuid}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    /** The request's row, or 404. */
    const require = Effect.fn("PayerView.require")(function* (uuid: string) {
      const row = yield* load(uuid)
      if (Option.isNone(row)) return yield* NotFound.of("deposit_request")
      return row.value
    })

    /** The payer's view, with the request's attachments as short-lived download links (paths of this service). */
    const read = Effect.fn("PayerView.read")(function* (uuid: string) {
      const [row, attached] = yield* Effect.all([require(uuid), attachments.forPayer(uuid)])
      return {
        ...payerViewOf(row, config),
        attachments: attached.map(({ row: a, path, expiresAt }) => ({
          id: toId("att", a.id) as string,
          file_name: a.file_name,
          size_bytes: Number(a.size_bytes),
          download_url: path,
          expires_at: formatTimestamp(expiresAt)
        }))
      }
    })

    return { require, read } as const
  })
}) {}
