import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option, Queue, Ref, Schedule } from "effect"
import { type Address, getAddress, toHex } from "viem"
import { chainIdOf } from "./domain/Environment"
import { ActorHost } from "./ActorHost"
import { Lease } from "./Lease"
import { Metrics } from "./Metrics"
import { chainCall, finalBlock, rpcCall } from "./ChainRpc"
import { blockCall, type ChainAccess, ChainEndpoints } from "./ChainEndpoints"
import { decodeTransferLog, type RawLog, TRANSFER_TOPIC } from "./TransferLog"
import { chainSettings } from "./Settings"

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
/** Credits applied to their requests per transaction. */
export const APPLY_BATCH = 500
/** Transactions applying one batch side by side, and the fewest credits worth a lane of their own. */
export const APPLY_LANES = 4
export const APPLY_LANE_MIN = 50
/** Applying also looks for unapplied credits this often without being woken (after a crash, say). */
export const APPLY_NET = Duration.seconds(1)

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

/** A recorded credit not yet applied to its request. */
interface PendingCredit {
  readonly tx_hash: string
  readonly log_index: number
  readonly deposit_request_id: string
  readonly from_address: string
  readonly amount_base_units: string
  readonly seen_at: Date
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
    const host = yield* ActorHost
    const config = yield* chainSettings
    const metrics = yield* Metrics
    const chainId = chainIdOf(config.serviceEnv)
    // Recording wakes applying: credits reach the actors in their own loop, so a block's recording never waits on
    // the previous block's application (and a slow actor transaction never delays the cursor).
    const wake = yield* Queue.sliding<void>(1)
    // Raw JSON-RPC: the watcher needs a block number and three fields per log, not viem's formatted objects.
    const rpc = rpcCall(chain.request)

    // The watched addresses, held in memory between full reads (a full read also drops addresses past retention).
    // A `to` the map does not know is looked up in the database in the same step, after the logs were read: an
    // address is shown to a payer only once committed, so a transfer to it cannot be missed.
    let addresses = new Map<string, string>()
    let fullReadAt = Number.NEGATIVE_INFINITY
    const watched = Effect.fn("ChainWatcher.watched")(function* (to: ReadonlyArray<Address>) {
      const now = yield* Clock.currentTimeMillis
      const since = new Date(now - RETENTION_DAYS * 86_400_000)
      if (now - fullReadAt > FULL_REFRESH_MS) {
        const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, deposit_address from deposit_requests
            where deposit_address is not null
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
        addresses = new Map(rows.map((r) => [r.deposit_address.toLowerCase(), r.id]))
        fullReadAt = now
      }
      // Deposit addresses are stored as derived (EIP-55): the unique index serves the checksummed form.
      const unknown = [...new Set(to.filter((a) => !addresses.has(a)))].map((a) => getAddress(a))
      for (let i = 0; i < unknown.length; i += 5000) {
        const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, deposit_address from deposit_requests
            where deposit_address in ${sql.in(unknown.slice(i, i + 5000))}
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
        for (const r of rows) addresses.set(r.deposit_address.toLowerCase(), r.id)
      }
      return addresses
    })

    /** Applies recorded credits not yet applied (after a crash too), oldest first; how many it applied. */
    const applyPending = Effect.gen(function* () {
      const pending = yield* sql<PendingCredit>`
        select tx_hash, log_index, deposit_request_id, from_address, amount_base_units::text, seen_at
        from chain_credits where chain_id = ${chainId} and applied_at is null
        order by seen_at, block_number, log_index limit ${APPLY_BATCH}`
      if (pending.length === 0) return 0
      const appliedAt = new Date(yield* Clock.currentTimeMillis)
      // The batch is split into lanes by request (a request's credits stay in one lane, in order), each one
      // transaction in which the credits' events and their applied_at commit together. Lanes run side by side, so
      // the database works on one while this process steps the machines of another.
      const laneCount = Math.min(APPLY_LANES, Math.ceil(pending.length / APPLY_LANE_MIN))
      const lanes = Array.from({ length: laneCount }, () => [] as Array<PendingCredit>)
      const laneOf = new Map<string, number>()
      for (const credit of pending) {
        const lane = laneOf.get(credit.deposit_request_id) ?? laneOf.size % laneCount
        laneOf.set(credit.deposit_request_id, lane)
        lanes[lane]?.push(credit)
      }
      yield* Effect.forEach(lanes, (lane) => applyLane(lane, appliedAt), {
        concurrency: "unbounded",
        discard: true
      })
      return pending.length
    })

    const applyLane = (pending: ReadonlyArray<PendingCredit>, appliedAt: Date) =>
      host.applyMany(
        pending.map((credit) => {
          const key = `${chainId}:${credit.tx_hash}:${credit.log_index}`
          return {
            depositRequestId: credit.deposit_request_id,
            eventId: `credit:${key}`,
            event: {
              type: "deposit.credited",
              at: credit.seen_at.toISOString(),
              credit_id: key,
              amount_base_units: credit.amount_base_units,
              from: credit.from_address
            }
          } as const
        }),
        sql`
          update chain_credits c set applied_at = ${appliedAt}
          from ${sql.updateValues(
            pending.map((c) => ({ tx_hash: c.tx_hash, log_index: c.log_index })),
            "p"
          )}
          where c.chain_id = ${chainId} and c.tx_hash = p.tx_hash and c.log_index = p.log_index::integer`.pipe(
          Effect.asVoid
        )
      )

    /**
     * Finality is the node's word, and a node can break it. The blocks of recent credits are read again each second:
     * one whose hash changed (or that no longer exists) was reorganised after it was final, so its credits may
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
      const isCanonical = (b: { number: bigint; hash: string }) =>
        rpc<{ hash: string } | null>("eth_getBlockByNumber", [toHex(b.number), false]).pipe(
          Effect.map((block) => block?.hash === b.hash),
          // A node that does not answer proves nothing either way: asked again next second.
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
        const affected = yield* sql<{ tx_hash: string; log_index: number; deposit_request_id: string }>`
          update chain_credits set reorged_at = ${at}
          where chain_id = ${chainId} and block_number = ${b.number.toString()} and block_hash = ${b.hash}
          returning tx_hash, log_index, deposit_request_id`
        for (const c of affected) {
          yield* host.apply(c.deposit_request_id, `deep-reorg:${chainId}:${c.tx_hash}:${c.log_index}`, {
            type: "attention.raised",
            at: at.toISOString(),
            code: "deep_reorg",
            message: `Block ${b.number}, which held payment ${c.tx_hash}, was reorganised after it was final.`,
            resolution:
              "Check on chain whether the payment still exists and reconcile the request; settle or return by hand if needed, then resume it."
          })
        }
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
            block !== null && found.every((log) => log.blockNumber === null || BigInt(log.blockNumber) <= to),
          `block ${to}`
        )
      )
      const transfers = logs.flatMap((log) => decodeTransferLog(log) ?? [])
      const addresses = yield* watched(transfers.map((t) => t.to))
      const credits = transfers.flatMap((t) => {
        const requestId = addresses.get(t.to)
        return requestId === undefined ? [] : [{ ...t, requestId }]
      })
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
            ${credits.map((c) => c.txHash)}::text[], ${credits.map((c) => c.logIndex)}::int[],
            ${credits.map((c) => c.blockNumber.toString())}::bigint[], ${credits.map((c) => c.blockHash)}::text[],
            ${credits.map((c) => c.requestId)}::uuid[], ${credits.map((c) => getAddress(c.from))}::text[],
            ${credits.map((c) => c.value.toString())}::numeric[]
          ) as c
          where exists (select from moved)
          on conflict do nothing
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
      const blocks = new Map(credits.map((c) => [c.blockNumber, c.blockHash]))
      yield* Ref.update(recentRef, (recent) =>
        recent === undefined
          ? undefined
          : [...recent, ...[...blocks].map(([number, hash]) => ({ number, hash, seenAt: now.getTime() }))]
              .sort((a, b) => (a.number > b.number ? -1 : 1))
              .slice(0, REORG_RECHECK_BLOCKS)
      )
      if (credits.length > 0) yield* wake.offer(undefined)
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
    // A full batch means more may wait; otherwise it waits until recording wakes it (APPLY_NET at most).
    const applyLoop = applyPending.pipe(
      Effect.uninterruptible,
      Effect.withSpan("ChainWatcher.applyPending"),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("applying credits failed", cause), 0)),
      Effect.tap((applied) =>
        applied < APPLY_BATCH ? Effect.race(Queue.take(wake), Effect.sleep(APPLY_NET)) : Effect.void
      ),
      Effect.forever
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
        Effect.all([stepLoop, applyLoop, recheckLoop], { concurrency: "unbounded", discard: true })
      ),
      step,
      applyPending,
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
