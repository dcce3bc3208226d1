import type { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"

/**
 * The `chain_credits` record as the relay and the consumer share it: the message one of its rows becomes on the
 * credits stream, and the time columns each side sets once it has done its part (published, applied).
 */

/** What travels on the credits stream: a final credit, or the notice that its block was reorganised after. */
export const CreditMessage = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("credit"),
    chain_id: Schema.Number,
    tx_hash: Schema.String,
    log_index: Schema.Number,
    deposit_request_id: Schema.String,
    from_address: Schema.String,
    amount_base_units: Schema.String,
    seen_at: Schema.String
  }),
  Schema.Struct({
    kind: Schema.Literal("reorg"),
    chain_id: Schema.Number,
    tx_hash: Schema.String,
    log_index: Schema.Number,
    deposit_request_id: Schema.String,
    block_number: Schema.String,
    reorged_at: Schema.String
  })
)
export type CreditMessage = typeof CreditMessage.Type

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
