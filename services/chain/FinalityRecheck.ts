import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Ref } from "effect"
import { type ChainAccess, blockCall } from "./ChainEndpoints"
import { chainCall } from "./ChainRpc"

/** Credits seen this recently have their block hash checked again (at most this many blocks). */
export const REORG_RECHECK_MS = 10 * 60_000
export const REORG_RECHECK_BLOCKS = 32
/** How often the recent credit blocks are read again, in their own loop beside the steps. */
export const REORG_RECHECK_EVERY = Duration.seconds(1)

/** A block that held credits, with its hash when they were recorded. */
interface RecentBlock {
  readonly number: bigint
  readonly hash: string
  readonly seenAt: number
}

/**
 * Finality is the node's word, and a node can break it. The blocks of recent credits are read again each second:
 * one whose hash changed was reorganised after it was final, so its credits may not exist any more. Their credits
 * are marked reorganised, and the relay (told by `onReorged`) sends the notices that pause their requests with
 * `needs_attention` (`deep_reorg`) for an operator, once each. The recent credit blocks are the ones this instance
 * recorded (`remember`), read from the database once per lease (`forget` starts a lease).
 */
export const makeFinalityRecheck = (chain: ChainAccess, chainId: number, onReorged: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const recentRef = yield* Ref.make<Array<RecentBlock> | undefined>(undefined)

    // Only a different hash at the block's height proves a reorganisation. An endpoint that answers "no such
    // block" has usually not reached it (a provider trailing the head, or a load-balanced node that does): the
    // block is asked of an endpoint that has it, and when none has, that proves nothing either way and it is
    // asked again next second (a chain cut back below it grows again, and then shows the other hash).
    const isCanonical = (b: { number: bigint; hash: string }) =>
      chainCall("eth_getBlockByNumber", () =>
        chain.together<readonly [{ hash: string } | null]>(
          [blockCall(b.number)],
          ([block]) => block !== null,
          `block ${b.number}`
        )
      ).pipe(
        Effect.map(([block]) => block?.hash === b.hash),
        Effect.orElseSucceed(() => true)
      )

    /** One pass over the recent credit blocks. */
    const recheck = Effect.fn("ChainWatcher.recheckFinality")(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      // While it is unknown, steps add nothing to it (the database read finds what they record).
      if ((yield* Ref.get(recentRef)) === undefined) {
        const rows = yield* sql<{ block_number: string; block_hash: string; seen_at: Date }>`
          select block_number::text, block_hash, max(seen_at) as seen_at from chain_credits
          where chain_id = ${chainId} and seen_at > ${new Date(nowMs - REORG_RECHECK_MS)} and reorged_at is null
          group by 1, 2 order by 1 desc limit ${REORG_RECHECK_BLOCKS}`
        yield* Ref.set(
          recentRef,
          rows.map((r) => ({
            number: BigInt(r.block_number),
            hash: r.block_hash,
            seenAt: r.seen_at.getTime()
          }))
        )
      }
      const recent = yield* Ref.modify(recentRef, (blocks = []) => {
        const kept = blocks.filter((b) => nowMs - b.seenAt < REORG_RECHECK_MS).slice(0, REORG_RECHECK_BLOCKS)
        return [kept, kept]
      })
      // A block's hash commits to its parent's: when the newest credit block is unchanged, so are all before it.
      const newest = recent[0]
      if (newest === undefined || (yield* isCanonical(newest))) return
      const canonical = yield* Effect.forEach(recent, isCanonical, { concurrency: 8 })
      for (const [i, b] of recent.entries()) {
        if (canonical[i]) continue
        yield* Ref.update(recentRef, (now) => now?.filter((r) => r !== b))
        const at = new Date(yield* Clock.currentTimeMillis)
        // The notices reach the requests through the credits stream, after their credits (CreditRelay).
        const affected = yield* sql`
          update chain_credits set reorged_at = ${at}
          where chain_id = ${chainId} and block_number = ${b.number.toString()} and block_hash = ${b.hash}
          returning 1`
        if (affected.length > 0) yield* onReorged
      }
    })

    /** Adds the blocks a step recorded credits in (number → hash), seen at `seenAt`. */
    const remember = Effect.fn("FinalityRecheck.remember")(function* (
      blocks: ReadonlyMap<string, string>,
      seenAt: number
    ) {
      // Before the recheck's first read of the database (which will find these), there is nothing to add to.
      yield* Ref.update(recentRef, (recent) =>
        recent === undefined
          ? undefined
          : [...recent, ...[...blocks].map(([number, hash]) => ({ number: BigInt(number), hash, seenAt }))]
              .sort((a, b) => (a.number > b.number ? -1 : 1))
              .slice(0, REORG_RECHECK_BLOCKS)
      )
    })

    /** A new lease: what this instance knew may be stale. */
    const forget = Ref.set(recentRef, undefined)

    return { recheck, remember, forget } as const
  })
