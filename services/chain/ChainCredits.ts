import type { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"

/**
 * The `chain_credits` record as the relay and the consumer share it: the message one of its rows becomes on the
 * credits stream, and the time columns each side sets once it has done its part (published, applied).
 */

/** What travels on the credits stream: a final credit, or the notice that its block was reorganised after. */
export type CreditMessage =
  | {
      readonly kind: "credit"
      readonly chain_id: number
      readonly tx_hash: string
      readonly log_index: number
      readonly deposit_request_id: string
      readonly from_address: string
      readonly amount_base_units: string
      readonly seen_at: string
    }
  | {
      readonly kind: "reorg"
      readonly chain_id: number
      readonly tx_hash: string
      readonly log_index: number
      readonly deposit_request_id: string
      readonly block_number: string
      readonly reorged_at: string
    }

/** Sets one time column of the named credits (one statement; none for no credits). */
export const stampCredits = (
  sql: PgClient.PgClient,
  keys: ReadonlyArray<{ readonly chain_id: number; readonly tx_hash: string; readonly log_index: number }>,
  column: "published_at" | "reorg_published_at" | "applied_at" | "reorg_applied_at",
  at: Date
) =>
  keys.length === 0
    ? Effect.void
    : sql`
          update chain_credits c set ${sql(column)} = ${at}
          from unnest(${keys.map((k) => k.chain_id)}::int[], ${keys.map((k) => k.tx_hash)}::text[],
                      ${keys.map((k) => k.log_index)}::int[]) as p(chain_id, tx_hash, log_index)
          where c.chain_id = p.chain_id and c.tx_hash = p.tx_hash and c.log_index = p.log_index`.pipe(
        Effect.asVoid
      )
