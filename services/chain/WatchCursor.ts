import { PgClient } from "@effect/sql-pg"
import { Effect, Ref } from "effect"
import type { CreditColumns } from "./TransferLog"

/**
 * The watcher's cursor (the last block it recorded) in PostgreSQL. It is read once per lease and then moved only
 * by compare-and-set, so an instance that lost the lease without knowing it can never record a range twice or
 * skip one.
 */
export const makeWatchCursor = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const cursorRef = yield* Ref.make<bigint | undefined>(undefined)

    /** The last recorded block, read from the database when this instance does not know it. */
    const current = Effect.fn("WatchCursor.current")(function* (head: bigint) {
      const known = yield* Ref.get(cursorRef)
      if (known !== undefined) return known
      // A fresh service starts at the current final block: history before it holds no request of ours.
      const rows = yield* sql<{ last_block: string }>`
          insert into chain_cursors (chain_id, last_block) values (${chainId}, ${head.toString()})
          on conflict (chain_id) do update set last_block = chain_cursors.last_block
          returning last_block::text`
      const cursor = BigInt(rows[0]?.last_block ?? head)
      yield* Ref.set(cursorRef, cursor)
      return cursor
    })

    /**
     * Moves the cursor from `cursor` to `to` and records the range's credits, or neither; false when someone else
     * had moved it (then it is read again next time).
     */
    const record = Effect.fn("WatchCursor.record")(function* (
      cursor: bigint,
      to: bigint,
      credits: CreditColumns,
      now: Date
    ) {
      // One statement, so atomic without a transaction. Columns travel as arrays (ten parameters, not one per
      // value).
      const moved = yield* sql<{ moved: number }>`
        with moved as (
          update chain_cursors set last_block = ${to.toString()}
          where chain_id = ${chainId} and last_block = ${cursor.toString()}
          returning 1
        ), recorded as (
          insert into chain_credits (chain_id, tx_hash, log_index, block_number, block_hash, deposit_request_id,
                                     from_address, amount_base_units, seen_at)
          select ${chainId}, c.* , ${now}
          from unnest(
            ${credits.txHash}::text[], ${credits.logIndex}::int[], ${credits.blockNumber}::bigint[],
            ${credits.blockHash}::text[], ${credits.requestId}::uuid[], ${credits.from}::text[],
            ${credits.value}::numeric[]
          ) as c (tx_hash, log_index, block_number, block_hash, deposit_request_id, from_address, amount)
          where exists (select from moved)
            -- Not "on conflict do nothing": its speculative insertion costs more on large ranges. Only the
            -- instance that moved the cursor inserts (the update above serializes them), so a key recorded
            -- before (a range read again) is all this has to skip.
            and not exists (
              select from chain_credits k
              where k.chain_id = ${chainId} and k.tx_hash = c.tx_hash and k.log_index = c.log_index
            )
          returning 1
        )
        select (select count(*) from moved)::int as moved`
      const done = moved[0]?.moved === 1
      yield* Ref.set(cursorRef, done ? to : undefined)
      return done
    })

    /** A new lease: the cursor may have moved meanwhile. */
    const forget = Ref.set(cursorRef, undefined)

    return { current, record, forget } as const
  })
