import { Config, Duration, Effect, Layer, Option, Queue, Redacted } from "effect"
import { getAddress, type Hex } from "viem"
import { type ChainAccess, ChainEndpoints } from "../chain/ChainEndpoints"
import { chainIdOf } from "../domain/Environment"
import { Lease } from "../platform/Lease"
import { workerLoop } from "../platform/Worker"
import { chainSettings } from "../chain/ChainSettings"
import { optionalSetting, positiveInteger } from "../platform/Settings"
import { makeBroadcaster } from "./Broadcaster"
import { makeCommandConsumer } from "./CommandConsumer"
import { makeTransferFollower } from "./TransferFollower"
import { makeTokenGate } from "./TokenGate"
import { makeTransferSigner } from "./TransferSigner"
import { makeTreasuryWallet } from "./TreasuryWallet"
import { makeUsedAuthorizations } from "./UsedAuthorizations"

export const TREASURY_INTERVAL = Duration.millis(500)

/**
 * Carries out settle and return commands from the outbox as a pipeline that keeps many transactions in flight
 * (`services/treasury/`): the command consumer takes every pending command in one pass, gives the transactions
 * consecutive nonces of the treasury's own (the signer), records them a group per database transaction before any
 * is broadcast, and broadcasts each group while signing the next; the follower reads the receipts of everything
 * not final in JSON-RPC batches, re-sends what the node may have lost, replaces stuck ones at the same nonce, and
 * feeds finality back to the requests as `settlement.confirmed` or `return.confirmed`, several at once. A transfer
 * leaves the deposit address through EIP-3009 `transferWithAuthorization`, signed by the deposit key (the address
 * holds no gas) and submitted by the treasury account.
 */
export const makeTreasury = (chainAccess: ChainAccess, token: Hex, treasuryKey: Hex) =>
  Effect.gen(function* () {
    const config = yield* treasurySettings
    const treasury = makeTreasuryWallet({
      chainAccess,
      token,
      treasuryKey,
      chainId: chainIdOf(config.serviceEnv),
      chainFinality: config.chainFinality
    })
    const broadcaster = yield* makeBroadcaster(treasury)
    const gate = yield* makeTokenGate(treasury)
    const used = yield* makeUsedAuthorizations(treasury, gate)
    const consume = yield* makeCommandConsumer(yield* makeTransferSigner(treasury), broadcaster, gate, used)
    const follow = yield* makeTransferFollower(treasury, broadcaster, gate, used, config)
    // A transfer just signed is broadcast at once: the consumer wakes the follower, which otherwise passes again
    // TREASURY_INTERVAL after its last pass.
    const signed = yield* Queue.sliding<void>(1)
    // A shutdown lets the pass under way finish: what it signed or saw final is recorded before the lease goes.
    // A consume pass that signed something wakes the follower and is followed at once by the next (commands that
    // arrived meanwhile); an idle or failed one waits TREASURY_INTERVAL.
    const consumer = workerLoop({
      name: "Treasury.consume",
      step: Effect.suspend(() => consume()),
      finishPassOnShutdown: true,
      every: (signedCount) =>
        Option.getOrElse(signedCount, () => 0) > 0
          ? Queue.offer(signed, undefined)
          : Effect.sleep(TREASURY_INTERVAL),
      failure: "treasury consume failed",
      failureLevel: "Warning"
    })
    const follower = workerLoop({
      name: "Treasury.follow",
      step: Effect.suspend(() => follow()),
      finishPassOnShutdown: true,
      every: () => Effect.race(Queue.take(signed), Effect.sleep(TREASURY_INTERVAL)),
      failure: "treasury follow failed",
      failureLevel: "Warning"
    })
    return {
      consume,
      follow,
      run: Effect.all([consumer, follower], { concurrency: "unbounded", discard: true })
    } as const
  })

/**
 * The chain settings, `TREASURY_PRIVATE_KEY` (the account that pays gas for settlements and returns; the sandbox's
 * start-up supplies the local chain's dev account 1) and `TRANSFER_REPLACE_AFTER_MS` (a broadcast transfer with no
 * receipt after this long is replaced at the same nonce with higher fees).
 */
export const treasurySettings = Config.all({
  chain: chainSettings,
  treasuryPrivateKey: optionalSetting("TREASURY_PRIVATE_KEY", "must be a 0x-prefixed 32-byte hex key", (k) =>
    /^0x[0-9a-fA-F]{64}$/.test(k)
  ).pipe(Config.map(Option.map(Redacted.make))),
  transferReplaceAfterMs: positiveInteger("TRANSFER_REPLACE_AFTER_MS", 60_000),
  /** Below this balance the treasury logs a warning at each gas check (default 0.01 ETH). */
  treasuryGasWarnGwei: positiveInteger("TREASURY_GAS_WARN_GWEI", 10_000_000)
}).pipe(Config.map(({ chain, ...rest }) => ({ ...chain, ...rest })))

/** Runs when a chain, a token and the treasury's key are configured. */
export const TreasuryLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* treasurySettings
    const { access: chain } = yield* ChainEndpoints
    if (Option.isNone(chain) || Option.isNone(config.tokenAddress)) return
    if (Option.isNone(config.treasuryPrivateKey)) {
      if (config.serviceEnv === "production")
        return yield* Effect.dieMessage("TREASURY_PRIVATE_KEY must be set in production")
      yield* Effect.logWarning("treasury off: set TREASURY_PRIVATE_KEY to settle and return payments")
      return
    }
    const key = Redacted.value(config.treasuryPrivateKey.value) as Hex
    const treasury = yield* makeTreasury(chain.value, getAddress(config.tokenAddress.value), key)
    const lease = yield* Lease
    yield* Effect.forkScoped(lease.whileHolding("treasury", treasury.run))
  })
)
