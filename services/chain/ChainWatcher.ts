import { Clock, Duration, Effect, Layer, Option } from "effect"
import { type Address, getAddress } from "viem"
import { chainIdOf } from "../domain/Environment"
import { Lease } from "../platform/Lease"
import { workerLoop } from "../platform/Worker"
import { Metrics } from "../platform/Metrics"
import { type ChainAccess, ChainEndpoints } from "./ChainEndpoints"
import { finalBlock } from "./ChainRpc"
import { chainSettings } from "./ChainSettings"
import { CreditsRecorded } from "./CreditsRecorded"
import { makeFinalityRecheck, REORG_RECHECK_EVERY } from "./FinalityRecheck"
import { matchCredits, nextRange, readRange, recipientsOf } from "./RangeReader"
import { makeWatchCursor } from "./WatchCursor"
import { makeWatchedAddresses } from "./WatchedAddresses"

export { RELAY_NET } from "./CreditRelay"
export { REORG_RECHECK_BLOCKS, REORG_RECHECK_EVERY, REORG_RECHECK_MS } from "./FinalityRecheck"
export { BLOCK_RANGE } from "./RangeReader"
export { FULL_REFRESH_MS, RETENTION_DAYS } from "./WatchedAddresses"

/** How often the node's `finalized` block is read when idle: one cheap call, and the floor of finality → event. */
export const WATCH_INTERVAL = Duration.millis(100)

/**
 * Reads the token's `Transfer` logs block range by block range, up to the final block only (the node's `finalized`
 * block, or N confirmations: CHAIN_FINALITY), so a credit that a reorganisation removes before finality is never
 * seen. Matches `to` against the watched deposit addresses in memory and records each credit by (chain, tx hash,
 * log index) with its block, then says so (`recorded`) to the relay, which publishes the credits for the actors
 * (CreditRelay, in its own worker); a second loop re-reads recent credit blocks for reorganisations deeper than
 * finality (FinalityRecheck). The cursor and the credits are in PostgreSQL: a restart carries on where it was.
 *
 * The phases live beside it: the range and its matching (RangeReader), the watched addresses (WatchedAddresses),
 * the cursor store (WatchCursor) and the reorganisation check (FinalityRecheck).
 */
export const makeChainWatcher = (
  chain: ChainAccess,
  token: Address,
  recorded: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function* () {
    const config = yield* chainSettings
    const metrics = yield* Metrics
    const chainId = chainIdOf(config.serviceEnv)
    const addresses = yield* makeWatchedAddresses
    const cursor = yield* makeWatchCursor(chainId)
    const finality = yield* makeFinalityRecheck(chain, chainId, recorded)

    /** One step: the next range up to the final block is read, matched and recorded; true when it moved. */
    const step = Effect.fn("ChainWatcher.step")(function* () {
      const head = yield* finalBlock(chain.request, config.chainFinality)
      const from = yield* cursor.current(head)
      const range = nextRange(from, head)
      if (range === undefined) {
        metrics.watcherLag.set(0)
        return false
      }
      const logs = yield* readRange(chain, token, range.from, range.to)
      // Two passes over the logs: the recipients first (the watched lookup may need the database), then the
      // statement's columns straight from the logs that match.
      const recipients = recipientsOf(logs)
      const watched = yield* addresses.watched(recipients.filter((a) => a !== undefined))
      const { credits, blocks } = matchCredits(logs, recipients, watched)
      const now = new Date(yield* Clock.currentTimeMillis)
      // Someone else moved the cursor: it is read again next step.
      if (!(yield* cursor.record(from, range.to, credits, now))) return false
      metrics.watcherLag.set(Number(head - range.to))
      yield* finality.remember(blocks, now.getTime())
      if (credits.txHash.length > 0) yield* recorded
      return true
    })

    // Each pass finishes before a shutdown stops its loop: a step's writes are one statement either way, and the
    // next lease holder starts from what was committed.
    const stepLoop = workerLoop({
      name: "ChainWatcher.step",
      step: Effect.suspend(() => step()),
      finishPassOnShutdown: true,
      // A step that moved the cursor is followed at once (the chain is ahead); otherwise, or after a failure, the
      // next comes WATCH_INTERVAL later.
      every: (moved) => (Option.getOrElse(moved, () => false) ? Effect.void : Effect.sleep(WATCH_INTERVAL)),
      failure: "chain watcher step failed",
      failureLevel: "Warning"
    })
    const recheckLoop = workerLoop({
      name: "ChainWatcher.recheckFinality",
      step: Effect.suspend(() => finality.recheck()),
      finishPassOnShutdown: true,
      every: REORG_RECHECK_EVERY,
      failure: "finality recheck failed",
      failureLevel: "Warning"
    })

    return {
      // A new lease: whatever this instance knew may be stale.
      run: Effect.zipRight(
        Effect.all([cursor.forget, finality.forget]),
        Effect.all([stepLoop, recheckLoop], { concurrency: "unbounded", discard: true })
      ),
      step,
      recheckFinality: finality.recheck
    } as const
  })

/** The watcher runs when a chain and a token are configured, one instance at a time under a lease. */
export const ChainWatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* chainSettings
    const { access: chain } = yield* ChainEndpoints
    if (Option.isNone(chain) || Option.isNone(config.tokenAddress)) {
      yield* Effect.logInfo("chain watcher off: set CHAIN_RPC_URLS and TOKEN_ADDRESS")
      return
    }
    const recorded = yield* CreditsRecorded
    const watcher = yield* makeChainWatcher(
      chain.value,
      getAddress(config.tokenAddress.value),
      Effect.suspend(() => recorded.notify())
    )
    const lease = yield* Lease
    yield* Effect.forkScoped(lease.whileHolding("chain-watcher", watcher.run))
  })
).pipe(Layer.provide(CreditsRecorded.Default))
