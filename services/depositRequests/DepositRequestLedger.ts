import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { getAddress } from "viem"
import type { DepositRequestContext, Recovery } from "../../machines/DepositRequest"
import { formatAmount } from "../domain/Amount"
import { toId } from "../domain/PrefixedId"
import { formatTimestamp } from "../domain/Timestamp"
import { recoveryWire } from "./DepositRequestWire"
import { orDieOnSql } from "../platform/SqlFailure"

interface CreditRow {
  readonly tx_hash: string
  readonly log_index: number
  readonly block_number: string
  readonly from_address: string
  readonly amount_base_units: string
  readonly seen_at: Date
}

interface TransferRow {
  readonly kind: "settle" | "return"
  readonly to_address: string
  readonly amount_base_units: string
  readonly tx_hash: string
  readonly state: "signed" | "confirmed" | "reverted"
  readonly block_number: string | null
  readonly created_at: Date
}

interface AttemptRow {
  readonly id: string
  readonly kind: "merchant_session" | "wallet" | "mailbox_send" | "mailbox_code"
  readonly outcome: "accepted" | "refused"
  readonly reason: string | null
  readonly wallet: string | null
  readonly attempted_at: Date
}

const checksummed = (address: string) => getAddress(address.toLowerCase())

/**
 * What moved on chain for one request, as a merchant reads it: payments in (the watcher's finalized credits),
 * settlements and returns out (the treasury's signed transfers), and the recovery ledger (from the lifecycle).
 * Every read is scoped by account: another account's request is not found.
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient

  const owned = (accountId: string, uuid: string) =>
    Effect.map(
      sql<{ deposit_address: string | null; snapshot: { context: DepositRequestContext } }>`
        select deposit_address, snapshot from deposit_requests where id = ${uuid} and account_id = ${accountId}`,
      (rows) => Option.fromNullable(rows[0])
    )

  const transfers = (accountId: string, uuid: string) =>
    Effect.gen(function* () {
      const request = yield* owned(accountId, uuid)
      if (Option.isNone(request)) return Option.none()
      const depositAddress = request.value.deposit_address
      if (depositAddress === null) return Option.some([])
      const credits = yield* sql<CreditRow>`
        select tx_hash, log_index, block_number, from_address, amount_base_units, seen_at
        from chain_credits where deposit_request_id = ${uuid}`
      const outgoing = yield* sql<TransferRow>`
        select kind, to_address, amount_base_units, tx_hash, state, block_number, created_at
        from transfers where deposit_request_id = ${uuid}`
      const rows = [
        ...credits.map((c) => ({
          direction: "in" as const,
          kind: "payment" as const,
          amount: formatAmount(BigInt(c.amount_base_units)),
          amount_base_units: BigInt(c.amount_base_units).toString(),
          from: checksummed(c.from_address),
          to: checksummed(depositAddress),
          transaction_hash: c.tx_hash,
          log_index: c.log_index,
          block_number: String(c.block_number),
          // The watcher records credits from finalized blocks only.
          finality: "finalized" as const,
          at: c.seen_at
        })),
        ...outgoing.map((t) => ({
          direction: "out" as const,
          kind: t.kind === "settle" ? ("settlement" as const) : ("return" as const),
          amount: formatAmount(BigInt(t.amount_base_units)),
          amount_base_units: BigInt(t.amount_base_units).toString(),
          from: checksummed(depositAddress),
          to: checksummed(t.to_address),
          transaction_hash: t.tx_hash,
          log_index: null,
          block_number: t.block_number === null ? null : String(t.block_number),
          finality:
            t.state === "confirmed"
              ? ("finalized" as const)
              : t.state === "reverted"
                ? ("reverted" as const)
                : ("pending" as const),
          at: t.created_at
        }))
      ]
      rows.sort(
        (a, b) => a.at.getTime() - b.at.getTime() || a.transaction_hash.localeCompare(b.transaction_hash)
      )
      return Option.some(rows.map((r) => ({ ...r, at: formatTimestamp(r.at) })))
    })

  const recoveries = (accountId: string, uuid: string) =>
    Effect.map(
      owned(accountId, uuid),
      Option.map((r) =>
        [...((r.snapshot.context as { recoveries?: ReadonlyArray<Recovery> }).recoveries ?? [])].map(
          recoveryWire
        )
      )
    )

  /**
   * The payer's proof attempts on a request, newest first: kind, outcome, reason, time, and the wallet of a wallet
   * attestation. Never a code, a secret or a digest of one. `None` when the request is not the account's.
   */
  const verificationAttempts = (
    accountId: string,
    uuid: string,
    page: { readonly limit: number; readonly startingAfter?: string | undefined }
  ) =>
    Effect.gen(function* () {
      // Only whether the request is the account's: no snapshot to read.
      const owns = yield* sql`select 1 from deposit_requests where id = ${uuid} and account_id = ${accountId}`
      if (owns.length === 0) return Option.none()
      const rows = yield* sql<AttemptRow>`
        select id, kind, outcome, reason, wallet, attempted_at from verification_attempts
        where deposit_request_id = ${uuid}
          ${page.startingAfter === undefined ? sql`` : sql`and id < ${page.startingAfter}`}
        order by id desc
        limit ${page.limit + 1}`
      const items = rows.slice(0, page.limit).map((r) => ({
        id: toId("va", r.id) as string,
        deposit_request_id: toId("dr", uuid) as string,
        kind: r.kind,
        outcome: r.outcome,
        reason: r.reason,
        wallet: r.wallet === null ? null : checksummed(r.wallet),
        attempted_at: formatTimestamp(r.attempted_at)
      }))
      return Option.some({
        verification_attempts: items,
        next_cursor: rows.length > page.limit ? (items.at(-1)?.id ?? null) : null
      })
    })

  return {
    transfers: Effect.fn("DepositRequestLedger.transfers")(function* (...args: Parameters<typeof transfers>) {
      return yield* transfers(...args)
    }, orDieOnSql),
    recoveries: Effect.fn("DepositRequestLedger.recoveries")(function* (
      ...args: Parameters<typeof recoveries>
    ) {
      return yield* recoveries(...args)
    }, orDieOnSql),
    verificationAttempts: Effect.fn("DepositRequestLedger.verificationAttempts")(function* (
      ...args: Parameters<typeof verificationAttempts>
    ) {
      return yield* verificationAttempts(...args)
    }, orDieOnSql)
  } as const
})

export class DepositRequestLedger extends Effect.Service<DepositRequestLedger>()(
  "deposits/DepositRequestLedger",
  {
    effect: make
  }
) {}
