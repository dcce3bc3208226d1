import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { CREDITS_STREAM, creditPartitionOf, creditSubject } from "../../infra/jetstream/Streams"
import { chainIdOf } from "../domain/Environment"
import {
  EventStream,
  mayBeLostBefore,
  type Publication,
  REPUBLISH_EVERY
} from "../platform/eventStream/EventStream"
import { Lease } from "../platform/Lease"
import { workerLoop } from "../platform/Worker"
import { type CreditMessage, stampCredits } from "./ChainCredits"
import { ChainEndpoints } from "./ChainEndpoints"
import { chainSettings } from "./ChainSettings"
import { CreditsRecorded } from "./CreditsRecorded"

export type { CreditMessage } from "./ChainCredits"

/** Rows published per pass. */
export const RELAY_BATCH = 2_000
/** The relay looks for unpublished credits this often without being woken (after a crash, say). */
export const RELAY_NET = Duration.seconds(1)

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

    /** Publishes what was recorded and never published; how many. */
    const publishNew = Effect.fn("CreditRelay.publishNew")(function* () {
      return yield* publish({
        credits: sql<CreditRow>`
        select ${columns} from chain_credits where chain_id = ${chainId} and published_at is null
        order by block_number, log_index limit ${RELAY_BATCH}`,
        reorgs: sql<CreditRow>`
        select ${columns} from chain_credits
        where chain_id = ${chainId} and reorged_at is not null and reorg_published_at is null
          and published_at is not null
        order by block_number, log_index limit ${RELAY_BATCH}`
      })
    })

    /** Publishes again what was published before the stream's store began, or long ago, and is still unapplied. */
    const republishLost = Effect.fn("CreditRelay.republishLost")(function* () {
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

/**
 * The relay runs beside the watcher when a chain and a token are configured, one instance at a time under its own
 * lease. Recorded credits are published at once: a full batch means more may wait; otherwise the relay waits until
 * the watcher says it recorded some (RELAY_NET at most). What the stream may have lost is published again every
 * REPUBLISH_EVERY.
 */
export const makeCreditRelayWorker = (chainId: number) =>
  Effect.gen(function* () {
    const relay = yield* makeCreditRelay(chainId)
    const recorded = yield* CreditsRecorded
    const relayLoop = workerLoop({
      name: "CreditRelay.publishNew",
      step: Effect.suspend(() => relay.publishNew()),
      finishPassOnShutdown: true,
      every: (published) =>
        Option.getOrElse(published, () => 0) < RELAY_BATCH
          ? Effect.race(recorded.next(), Effect.sleep(RELAY_NET))
          : Effect.void,
      failure: "publishing credits failed",
      failureLevel: "Warning"
    })
    const republishLoop = workerLoop({
      name: "CreditRelay.republishLost",
      step: Effect.suspend(() => relay.republishLost()),
      finishPassOnShutdown: true,
      every: REPUBLISH_EVERY,
      failure: "publishing credits again failed",
      failureLevel: "Warning"
    })
    return {
      ...relay,
      run: Effect.all([relayLoop, republishLoop], { concurrency: "unbounded", discard: true })
    } as const
  })

/** The relay's worker: on when the watcher is (a chain and a token configured). */
export const CreditRelayLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* chainSettings
    const { access: chain } = yield* ChainEndpoints
    if (Option.isNone(chain) || Option.isNone(config.tokenAddress)) return
    const worker = yield* makeCreditRelayWorker(chainIdOf(config.serviceEnv))
    const lease = yield* Lease
    yield* Effect.forkScoped(lease.whileHolding("credit-relay", worker.run))
  })
).pipe(Layer.provide(CreditsRecorded.Default))
