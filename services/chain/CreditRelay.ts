import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { CREDITS_STREAM, creditPartitionOf, creditSubject } from "../../infra/jetstream/Streams"
import { EventStream, mayBeLostBefore, type Publication } from "../platform/eventStream/EventStream"

/** Rows published per pass. */
export const RELAY_BATCH = 2_000

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

interface CreditRow {
  readonly tx_hash: string
  readonly log_index: number
  readonly deposit_request_id: string
  readonly from_address: string
  readonly amount_base_units: string
  readonly seen_at: Date
  readonly block_number: string
  readonly reorged_at: Date | null
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

/** The dedupe id of a message: the credit's key, so a message published again is stored once per window. */
const msgIdOf = (m: CreditMessage) => `${m.kind}:${m.chain_id}:${m.tx_hash}:${m.log_index}`

const publicationOf = (m: CreditMessage): Publication => ({
  subject: creditSubject(creditPartitionOf(m.deposit_request_id)),
  data: JSON.stringify(m),
  msgId: msgIdOf(m)
})

/**
 * Publishes the recorded credits (and deep-reorg notices) to the credits stream, in block order, and marks each
 * published only after the stream acknowledged it: nothing is published that PostgreSQL does not hold, and all it
 * holds is published. A credit its request has not applied is published again once the stream's store is newer
 * than its publication (the server came back empty) or after REPUBLISH_AFTER_MS (a message lost in a crash); the
 * message id makes a repeat within the window a no-op, and the actors dedupe by credit id beyond it.
 */
export const makeCreditRelay = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const stream = yield* EventStream

    const credit = (r: CreditRow): CreditMessage => ({
      kind: "credit",
      chain_id: chainId,
      tx_hash: r.tx_hash,
      log_index: r.log_index,
      deposit_request_id: r.deposit_request_id,
      from_address: r.from_address,
      amount_base_units: r.amount_base_units,
      seen_at: r.seen_at.toISOString()
    })
    const reorg = (r: CreditRow): CreditMessage => ({
      kind: "reorg",
      chain_id: chainId,
      tx_hash: r.tx_hash,
      log_index: r.log_index,
      deposit_request_id: r.deposit_request_id,
      block_number: r.block_number,
      reorged_at: (r.reorged_at ?? r.seen_at).toISOString()
    })

    /** Publishes credits and notices whose (re)publication `pending` selects; how many. */
    const publish = (pending: {
      readonly credits: ReturnType<typeof sql<CreditRow>>
      readonly reorgs: ReturnType<typeof sql<CreditRow>>
    }) =>
      Effect.gen(function* () {
        const credits = yield* pending.credits
        const reorgs = yield* pending.reorgs
        if (credits.length + reorgs.length === 0) return 0
        // Credits first: a request's notice follows its credit on the same partition.
        const creditMessages = credits.map(credit)
        const reorgMessages = reorgs.map(reorg)
        yield* stream.publish([...creditMessages, ...reorgMessages].map(publicationOf))
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* stampCredits(sql, creditMessages, "published_at", at)
        yield* stampCredits(sql, reorgMessages, "reorg_published_at", at)
        return credits.length + reorgs.length
      })

    const columns = sql`tx_hash, log_index, deposit_request_id, from_address, amount_base_units::text, seen_at,
      block_number::text, reorged_at`

    /** Publishes what was recorded and never published. */
    const publishNew = publish({
      credits: sql<CreditRow>`
        select ${columns} from chain_credits where chain_id = ${chainId} and published_at is null
        order by block_number, log_index limit ${RELAY_BATCH}`,
      reorgs: sql<CreditRow>`
        select ${columns} from chain_credits
        where chain_id = ${chainId} and reorged_at is not null and reorg_published_at is null
          and published_at is not null
        order by block_number, log_index limit ${RELAY_BATCH}`
    })

    /** Publishes again what was published before the stream's store began, or long ago, and is still unapplied. */
    const republishLost = Effect.gen(function* () {
      const before = yield* mayBeLostBefore(stream, CREDITS_STREAM.name)
      return yield* publish({
        credits: sql<CreditRow>`
          select ${columns} from chain_credits
          where chain_id = ${chainId} and applied_at is null and published_at < ${before}
          order by block_number, log_index limit ${RELAY_BATCH}`,
        reorgs: sql<CreditRow>`
          select ${columns} from chain_credits
          where chain_id = ${chainId} and reorg_applied_at is null and reorg_published_at < ${before}
          order by block_number, log_index limit ${RELAY_BATCH}`
      })
    })

    return { publishNew, republishLost } as const
  })
