import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { type Address, createPublicClient, getAddress, http, parseAbiItem } from "viem"
import { AppConfig } from "../src/Config"
import { chainIdOf } from "../src/Environment"
import { ActorHost } from "./ActorHost"
import { Lease } from "./Lease"

/** How often the node's `finalized` block is read when idle: one cheap call, and the floor of finality → event. */
export const WATCH_INTERVAL = Duration.millis(100)
/** Blocks read per `eth_getLogs` call. */
export const BLOCK_RANGE = 2000n
/** How long an address stays watched after its request last changed: late transfers are found and returned. */
export const RETENTION_DAYS = 30
/** How often the in-memory map of watched addresses is read whole; in between, only unknown `to`s are looked up. */
export const FULL_REFRESH_MS = 5 * 60_000
/** Credits seen this recently have their block hash checked again each step (at most this many blocks). */
export const REORG_RECHECK_MS = 10 * 60_000
export const REORG_RECHECK_BLOCKS = 32
/** The recent credit blocks are read again at most this often (not on every 100 ms poll). */
export const REORG_RECHECK_EVERY_MS = 1_000

const transfer = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

/**
 * Reads the token's `Transfer` logs block range by block range, up to the node's `finalized` block only, so a
 * credit that a reorganisation removes before finality is never seen. Matches `to` against the watched deposit
 * addresses in memory, records each credit by (chain, tx hash, log index) with its block, then applies it to the
 * request as `deposit.credited` with that key as the event id. The cursor, the credits and their application
 * are in PostgreSQL: a restart carries on where it was and re-applies nothing twice.
 */
export const makeChainWatcher = (rpcUrl: string, token: Address) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const host = yield* ActorHost
    const config = yield* AppConfig
    const chainId = chainIdOf(config.serviceEnv)
    const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }), pollingInterval: 100 })

    // The watched addresses, held in memory between full reads (a full read also drops addresses past retention).
    // A `to` the map does not know is looked up in the database in the same step, after the logs were read: an
    // address is shown to a payer only once committed, so a transfer to it cannot be missed.
    let addresses = new Map<string, string>()
    let fullReadAt = Number.NEGATIVE_INFINITY
    const watched = (to: ReadonlyArray<Address>) =>
      Effect.gen(function* () {
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
        // Deposit addresses are stored as derived (EIP-55), which is how viem decodes `to`: the unique index serves.
        const unknown = [...new Set(to.filter((a) => !addresses.has(a.toLowerCase())))]
        for (let i = 0; i < unknown.length; i += 5000) {
          const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, deposit_address from deposit_requests
            where deposit_address in ${sql.in(unknown.slice(i, i + 5000))}
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
          for (const r of rows) addresses.set(r.deposit_address.toLowerCase(), r.id)
        }
        return addresses
      })

    /** Applies recorded credits not yet applied (after a crash too), oldest first. */
    const applyPending = Effect.gen(function* () {
      const pending = yield* sql<{
        tx_hash: string
        log_index: number
        deposit_request_id: string
        from_address: string
        amount_base_units: string
        seen_at: Date
      }>`
        select tx_hash, log_index, deposit_request_id, from_address, amount_base_units::text, seen_at
        from chain_credits where chain_id = ${chainId} and applied_at is null order by seen_at limit 500`
      if (pending.length === 0) return
      // One transaction for the whole batch: the credits' events and their applied_at commit together.
      const appliedAt = new Date(yield* Clock.currentTimeMillis)
      yield* host.applyMany(
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
    })

    /** One step: the next range up to the finalized block; true when it moved. */
    /**
     * Finality is the node's word, and a node can break it. The blocks of recent credits are read again each step:
     * one whose hash changed (or that no longer exists) was reorganised after it was final, so its credits may
     * not exist any more. Their requests pause with `needs_attention` (`deep_reorg`) for an operator, once each.
     */
    let recheckedAt = Number.NEGATIVE_INFINITY
    const recheckFinality = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      if (nowMs - recheckedAt < REORG_RECHECK_EVERY_MS) return
      recheckedAt = nowMs
      const since = new Date(nowMs - REORG_RECHECK_MS)
      const blocks = yield* sql<{ block_number: string; block_hash: string }>`
        select distinct block_number::text, block_hash from chain_credits
        where chain_id = ${chainId} and seen_at > ${since} and reorged_at is null
        order by 1 desc limit ${REORG_RECHECK_BLOCKS}`
      for (const b of blocks) {
        const block = yield* Effect.tryPromise(() =>
          client.getBlock({ blockNumber: BigInt(b.block_number) })
        ).pipe(Effect.option)
        if (Option.isSome(block) && block.value.hash === b.block_hash) continue
        const at = new Date(yield* Clock.currentTimeMillis)
        const affected = yield* sql<{ tx_hash: string; log_index: number; deposit_request_id: string }>`
          update chain_credits set reorged_at = ${at}
          where chain_id = ${chainId} and block_number = ${b.block_number} and block_hash = ${b.block_hash}
          returning tx_hash, log_index, deposit_request_id`
        for (const c of affected) {
          yield* host.apply(c.deposit_request_id, `deep-reorg:${chainId}:${c.tx_hash}:${c.log_index}`, {
            type: "attention.raised",
            at: at.toISOString(),
            code: "deep_reorg",
            message: `Block ${b.block_number}, which held payment ${c.tx_hash}, was reorganised after it was final.`,
            resolution:
              "Check on chain whether the payment still exists and reconcile the request; settle or return by hand if needed, then resume it."
          })
        }
      }
    })

    const step = Effect.gen(function* () {
      yield* recheckFinality
      const finalized = yield* Effect.tryPromise(() => client.getBlock({ blockTag: "finalized" }))
      const head = finalized.number ?? 0n
      const cursor = yield* sql<{
        last_block: string
      }>`select last_block::text from chain_cursors where chain_id = ${chainId}`
      // A fresh service starts at the current finalized block: history before it holds no request of ours.
      const from = cursor[0] === undefined ? head : BigInt(cursor[0].last_block) + 1n
      if (from > head) return false
      const to = from + BLOCK_RANGE - 1n < head ? from + BLOCK_RANGE - 1n : head
      const logs = yield* Effect.tryPromise(() =>
        client.getLogs({ address: token, event: transfer, fromBlock: from, toBlock: to })
      )
      const addresses = yield* watched(
        logs.flatMap((log) => (log.args.to === undefined ? [] : [log.args.to]))
      )
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql.withTransaction(
        Effect.gen(function* () {
          const credits: Array<Record<string, unknown>> = []
          for (const log of logs) {
            const requestId = log.args.to === undefined ? undefined : addresses.get(log.args.to.toLowerCase())
            if (requestId === undefined || log.transactionHash === null || log.logIndex === null) continue
            credits.push({
              chain_id: chainId,
              tx_hash: log.transactionHash,
              log_index: log.logIndex,
              block_number: log.blockNumber?.toString() ?? "0",
              block_hash: log.blockHash ?? "",
              deposit_request_id: requestId,
              from_address: getAddress(log.args.from ?? "0x0000000000000000000000000000000000000000"),
              amount_base_units: (log.args.value ?? 0n).toString(),
              seen_at: now
            })
          }
          if (credits.length > 0)
            yield* sql`insert into chain_credits ${sql.insert(credits)} on conflict do nothing`
          yield* sql`
            insert into chain_cursors (chain_id, last_block) values (${chainId}, ${to.toString()})
            on conflict (chain_id) do update set last_block = excluded.last_block`
        })
      )
      return true
    })

    return {
      run: Effect.gen(function* () {
        while (true) {
          const moved = yield* step.pipe(
            Effect.zipLeft(applyPending),
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning("chain watcher step failed", cause), false)
            )
          )
          if (!moved) yield* Effect.sleep(WATCH_INTERVAL)
        }
      }),
      step,
      applyPending
    } as const
  })

/** The watcher runs when a chain and a token are configured, one instance at a time under a lease. */
export const ChainWatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isNone(config.chainRpcUrl) || Option.isNone(config.tokenAddress)) {
      yield* Effect.logInfo("chain watcher off: set CHAIN_RPC_URL and TOKEN_ADDRESS")
      return
    }
    const watcher = yield* makeChainWatcher(config.chainRpcUrl.value, getAddress(config.tokenAddress.value))
    const lease = yield* Lease
    yield* Effect.forkScoped(lease.whileHolding("chain-watcher", watcher.run))
  })
)
