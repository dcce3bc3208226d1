import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option, Queue, Ref, Schedule } from "effect"
import { type Address, getAddress, toHex } from "viem"
import { chainIdOf } from "../domain/Environment"
import { makeCreditRelay, RELAY_BATCH } from "./CreditRelay"
import { Lease } from "../platform/Lease"
import { Metrics } from "../platform/Metrics"
import { chainCall, finalBlock } from "./ChainRpc"
import { blockCall, type ChainAccess, ChainEndpoints } from "./ChainEndpoints"
import {
  appendCredit,
  emptyCreditColumns,
  type RawLog,
  TRANSFER_TOPIC,
  transferRecipient
} from "./TransferLog"
import { chainSettings } from "./ChainSettings"
import { REPUBLISH_EVERY } from "../platform/eventStream/EventStream"

/** How often the node's `finalized` block is read when idle: one cheap call, and the floor of finality → event. */
export const WATCH_INTERVAL = Duration.millis(100)
/** Blocks read per `eth_getLogs` call. */
export const BLOCK_RANGE = 2000n
/** How long an address stays watched after its request last changed: late transfers are found and returned. */
export const RETENTION_DAYS = 30
/** How often the in-memory map of watched addresses is read whole; in between, only unknown `to`s are looked up. */
export const FULL_REFRESH_MS = 5 * 60_000
/** Credits seen this recently have their block hash checked again (at most this many blocks). */
export const REORG_RECHECK_MS = 10 * 60_000
export const REORG_RECHECK_BLOCKS = 32
/** How often the recent credit blocks are read again, in their own loop beside the steps. */
export const REORG_RECHECK_EVERY = Duration.seconds(1)
/** The relay looks for unpublished credits this often without being woken (after a crash, say). */
export const RELAY_NET = Duration.seconds(1)

/** The next range is read at once after one moved the cursor, else after WATCH_INTERVAL. */
const stepCadence = Schedule.identity<boolean>().pipe(
  Schedule.addDelay((moved) => (moved ? Duration.zero : WATCH_INTERVAL))
)
/** The recent credit blocks are read again every REORG_RECHECK_EVERY. */
const recheckCadence = Schedule.spaced(REORG_RECHECK_EVERY)

/** A block that held credits, with its hash when they were recorded. */
interface RecentBlock {
  readonly number: bigint
  readonly hash: string
  readonly seenAt: number
}

/**
 * Reads the token's `Transfer` logs block range by block range, up to the final block only (the node's `finalized`
 * block, or N confirmations: CHAIN_FINALITY), so a credit that a reorganisation removes before finality is never
 * seen. Matches `to` against the watched deposit addresses in memory and records each credit by (chain, tx hash,
 * log index) with its block; a second loop applies recorded credits to their requests as `deposit.credited` with
 * that key as the event id, and a third re-reads recent credit blocks for reorganisations deeper than finality. The cursor, the credits and their application
 * are in PostgreSQL: a restart carries on where it was and re-applies nothing twice.
 */
export const makeChainWatcher = (chain: ChainAccess, token: Address) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const config = yield* chainSettings
    const metrics = yield* Metrics
    const chainId = chainIdOf(config.serviceEnv)
    const relay = yield* makeCreditRelay(chainId)
    // Recording wakes applying: credits reach the actors in their own loop, so a block's recording never waits on
    // the previous block's application (and a slow actor transaction never delays the cursor).
    const wake = yield* Queue.sliding<void>(1)

    // The watched addresses, held in memory between full reads (a full read also drops addresses past retention).
    // A `to` the map does not know is looked up in the database in the same step, after the logs were read: an
    // address is shown to a payer only once committed, so a transfer to it cannot be missed. The map is only a
    // cache in front of that lookup, so after the first read the full reads (100,000 rows and more) run beside
    // the steps, not inside one, and replace the map when done.
    let addresses = new Map<string, string>()
    let fullReadAt = Number.NEGATIVE_INFINITY
    let fullReadRunning = false
    const readAllWatched = (now: number) =>
      Effect.gen(function* () {
        const since = new Date(now - RETENTION_DAYS * 86_400_000)
        const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, lower(deposit_address) as deposit_address from deposit_requests
            where deposit_address is not null
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
        const next = new Map<string, string>()
        // Built in slices, so a step running beside it is not held for the whole map.
        for (let i = 0; i < rows.length; i += 10_000) {
          const end = Math.min(rows.length, i + 10_000)
          for (let j = i; j < end; j++) next.set(rows[j]!.deposit_address, rows[j]!.id)
          yield* Effect.yieldNow()
        }
        return next
      })
    const watched = Effect.fn("ChainWatcher.watched")(function* (to: ReadonlyArray<Address>) {
      const now = yield* Clock.currentTimeMillis
      if (fullReadAt === Number.NEGATIVE_INFINITY) {
        addresses = yield* readAllWatched(now)
        fullReadAt = now
      } else if (now - fullReadAt > FULL_REFRESH_MS && !fullReadRunning) {
        fullReadRunning = true
        yield* Effect.forkDaemon(
          readAllWatched(now).pipe(
            Effect.tap((next) =>
              Effect.sync(() => {
                addresses = next
                fullReadAt = now
              })
            ),
            Effect.catchAllCause((cause) => Effect.logWarning("reading the watched addresses failed", cause)),
            Effect.ensuring(Effect.sync(() => (fullReadRunning = false)))
          )
        )
      }
      const unknownSet = new Set<string>()
      for (const a of to) if (!addresses.has(a)) unknownSet.add(a)
      if (unknownSet.size === 0) return addresses
      const since = new Date(now - RETENTION_DAYS * 86_400_000)
      // Deposit addresses are stored as derived (EIP-55): the unique index serves the checksummed form.
      const unknown = [...unknownSet].map((a) => getAddress(a))
      for (let i = 0; i < unknown.length; i += 5000) {
        const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, deposit_address from deposit_requests
            where deposit_address in ${sql.in(unknown.slice(i, i + 5000))}
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
        for (const r of rows) addresses.set(r.deposit_address.toLowerCase(), r.id)
      }
      return addresses
    })

    /**
     * Finality is the node's word, and a node can break it. The blocks of recent credits are read again each second:
     * one whose hash changed was reorganised after it was final, so its credits may
     * not exist any more. Their requests pause with `needs_attention` (`deep_reorg`) for an operator, once each.
     * The recent credit blocks are the ones this instance recorded, read from the database once per lease.
     */
    const recentRef = yield* Ref.make<Array<RecentBlock> | undefined>(undefined)
    const recheckFinality = Effect.gen(function* () {
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
      // A block's hash commits to its parent's: when the newest credit block is unchanged, so are all before it.
      const newest = recent[0]
      if (newest === undefined || (yield* isCanonical(newest))) return
      const blocks = recent
      const canonical = yield* Effect.forEach(blocks, isCanonical, { concurrency: 8 })
      for (const [i, b] of blocks.entries()) {
        if (canonical[i]) continue
        yield* Ref.update(recentRef, (now) => now?.filter((r) => r !== b))
        const at = new Date(yield* Clock.currentTimeMillis)
        // The notices reach the requests through the credits stream, after their credits (CreditRelay).
        const affected = yield* sql`
          update chain_credits set reorged_at = ${at}
          where chain_id = ${chainId} and block_number = ${b.number.toString()} and block_hash = ${b.hash}
          returning 1`
        if (affected.length > 0) yield* wake.offer(undefined)
      }
    })

    // The cursor is read once per lease and then moved only by compare-and-set, so an instance that lost the
    // lease without knowing it can never record a range twice or skip one.
    const cursorRef = yield* Ref.make<bigint | undefined>(undefined)
    /** One step: the next range up to the final block is read, matched and recorded; true when it moved. */
    const step = Effect.gen(function* () {
      const head = yield* finalBlock(chain.request, config.chainFinality)
      let cursor = yield* Ref.get(cursorRef)
      if (cursor === undefined) {
        // A fresh service starts at the current final block: history before it holds no request of ours.
        const rows = yield* sql<{ last_block: string }>`
          insert into chain_cursors (chain_id, last_block) values (${chainId}, ${head.toString()})
          on conflict (chain_id) do update set last_block = chain_cursors.last_block
          returning last_block::text`
        cursor = BigInt(rows[0]?.last_block ?? head)
        yield* Ref.set(cursorRef, cursor)
      }
      const from = cursor + 1n
      if (from > head) {
        metrics.watcherLag.set(0)
        return false
      }
      const to = from + BLOCK_RANGE - 1n < head ? from + BLOCK_RANGE - 1n : head
      // Block numbers stay far below 2^53: compared and sent as numbers, not bigints, for each log.
      const last = Number(to)
      // The logs and block `to` come from one endpoint in one batch, and count only if that endpoint has the
      // block: a provider behind the head (or a load-balanced one whose node is) answers an empty list for blocks
      // it has not reached, which would move the cursor past payments.
      const [logs] = yield* chainCall("eth_getLogs", () =>
        chain.together<readonly [ReadonlyArray<RawLog>, { hash: string } | null]>(
          [
            {
              method: "eth_getLogs",
              params: [
                { address: token, topics: [TRANSFER_TOPIC], fromBlock: toHex(from), toBlock: toHex(to) }
              ]
            },
            blockCall(to)
          ],
          ([found, block]) =>
            block !== null &&
            found.every((log) => log.blockNumber === null || Number(log.blockNumber) <= last),
          `block ${to}`
        )
      )
      // Two passes over the logs: the recipients first (the watched lookup may need the database), then the
      // statement's columns straight from the logs that match.
      const recipients: Array<Address | undefined> = logs.map(transferRecipient)
      const addresses = yield* watched(recipients.filter((a) => a !== undefined))
      const credits = emptyCreditColumns()
      const blocks = new Map<string, string>()
      // A log a node lists twice is recorded once (the statement below has no conflict clause to absorb it).
      const seen = new Set<string>()
      for (let i = 0; i < logs.length; i++) {
        const recipient = recipients[i]
        const requestId = recipient === undefined ? undefined : addresses.get(recipient)
        if (requestId === undefined) continue
        const log = logs[i]!
        const key = `${log.transactionHash}:${log.logIndex}`
        if (seen.has(key)) continue
        seen.add(key)
        // Recorded as the payer is shown (EIP-55); viem keeps recent checksums, so a repeat payer costs no hash.
        appendCredit(credits, log, requestId, getAddress)
        blocks.set(log.blockNumber!, log.blockHash!)
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      // One statement, so atomic without a transaction: the cursor moves from where this instance left it and the
      // range's credits are recorded, or neither happens. Columns travel as arrays (ten parameters, not 4,500).
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
            -- Not "on conflict do nothing": its speculative insertion cost about 40% more at 2,000 rows. Only the
            -- instance that moved the cursor inserts (the update above serializes them), so a key recorded
            -- before (a range read again) is all this has to skip.
            and not exists (
              select from chain_credits k
              where k.chain_id = ${chainId} and k.tx_hash = c.tx_hash and k.log_index = c.log_index
            )
          returning 1
        )
        select (select count(*) from moved)::int as moved`
      if (moved[0]?.moved !== 1) {
        // Someone else moved the cursor: read it again next step.
        yield* Ref.set(cursorRef, undefined)
        return false
      }
      yield* Ref.set(cursorRef, to)
      metrics.watcherLag.set(Number(head - to))
      // Before the recheck's first read of the database (which will find these), there is nothing to add to.
      yield* Ref.update(recentRef, (recent) =>
        recent === undefined
          ? undefined
          : [
              ...recent,
              ...[...blocks].map(([number, hash]) => ({
                number: BigInt(number),
                hash,
                seenAt: now.getTime()
              }))
            ]
              .sort((a, b) => (a.number > b.number ? -1 : 1))
              .slice(0, REORG_RECHECK_BLOCKS)
      )
      if (credits.txHash.length > 0) yield* wake.offer(undefined)
      return true
    })

    // Each pass finishes before a shutdown stops its loop: a step's writes are one transaction either way, and the
    // next lease holder starts from what was committed.
    const stepLoop = step.pipe(
      Effect.uninterruptible,
      Effect.withSpan("ChainWatcher.step"),
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("chain watcher step failed", cause), false)
      ),
      Effect.repeat(stepCadence)
    )
    // Recorded credits are published at once: a full batch means more may wait; otherwise the relay waits until
    // recording wakes it (RELAY_NET at most). What the stream may have lost is published again every second.
    const relayLoop = relay.publishNew.pipe(
      Effect.uninterruptible,
      Effect.withSpan("ChainWatcher.publishCredits"),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("publishing credits failed", cause), 0)),
      Effect.tap((published) =>
        published < RELAY_BATCH ? Effect.race(Queue.take(wake), Effect.sleep(RELAY_NET)) : Effect.void
      ),
      Effect.forever
    )
    const republishLoop = relay.republishLost.pipe(
      Effect.uninterruptible,
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("publishing credits again failed", cause), 0)
      ),
      Effect.repeat(Schedule.spaced(REPUBLISH_EVERY))
    )
    const recheckLoop = recheckFinality.pipe(
      Effect.uninterruptible,
      Effect.withSpan("ChainWatcher.recheckFinality"),
      Effect.catchAllCause((cause) => Effect.logWarning("finality recheck failed", cause)),
      Effect.repeat(recheckCadence)
    )

    return {
      // A new lease: whatever this instance knew may be stale.
      run: Effect.zipRight(
        Effect.all([Ref.set(cursorRef, undefined), Ref.set(recentRef, undefined)]),
        Effect.all([stepLoop, relayLoop, republishLoop, recheckLoop], {
          concurrency: "unbounded",
          discard: true
        })
      ),
      step,
      publishCredits: relay.publishNew,
      recheckFinality
    } as const
  })

/** The watcher runs when a chain and a token are configured, one instance at a time under a lease. */
export const ChainWatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* chainSettings
    const chain = yield* ChainEndpoints
    if (Option.isNone(chain) || Option.isNone(config.tokenAddress)) {
      yield* Effect.logInfo("chain watcher off: set CHAIN_RPC_URLS and TOKEN_ADDRESS")
      return
    }
    const watcher = yield* makeChainWatcher(chain.value, getAddress(config.tokenAddress.value))
    const lease = yield* Lease
    yield* Effect.forkScoped(lease.whileHolding("chain-watcher", watcher.run))
  })
)
