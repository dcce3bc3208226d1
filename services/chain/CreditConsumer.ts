import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Layer, Option, Queue } from "effect"
import { CREDIT_PARTITIONS, creditConsumer } from "../../infra/jetstream/Streams"
import { type ActorEvent, ActorHost } from "../actors/ActorHost"
import { CreditMessage, stampCredits } from "./ChainCredits"
import { consumeIntoQueue, EventStream, type StreamMessage } from "../platform/eventStream/EventStream"
import { messageDecoder } from "../platform/eventStream/MessageDecoding"
import { Lease } from "../platform/Lease"
import { chainSettings } from "./ChainSettings"

/** Credits applied to their requests per transaction. */
export const APPLY_BATCH = 500
/** A batch whose commit failed is offered again after this long. */
export const RETRY_DELAY_MS = 1_000

const eventOf = (m: CreditMessage): ActorEvent => {
  const key = `${m.chain_id}:${m.tx_hash}:${m.log_index}`
  return m.kind === "credit"
    ? {
        depositRequestId: m.deposit_request_id,
        eventId: `credit:${key}`,
        event: {
          type: "deposit.credited",
          at: m.seen_at,
          credit_id: key,
          amount_base_units: m.amount_base_units,
          from: m.from_address
        }
      }
    : {
        depositRequestId: m.deposit_request_id,
        eventId: `deep-reorg:${key}`,
        event: {
          type: "attention.raised",
          at: m.reorged_at,
          code: "deep_reorg",
          message: `Block ${m.block_number}, which held payment ${m.tx_hash}, was reorganised after it was final.`,
          resolution:
            "Check on chain whether the payment still exists and reconcile the request; settle or return by hand if needed, then resume it."
        }
      }
}

const settleAll = (messages: ReadonlyArray<StreamMessage>, settle: (m: StreamMessage) => void) => {
  for (const m of messages) settle(m)
}

/** A credits message as it enters the room; a malformed one is logged and termed. */
export const decodeCreditMessage = messageDecoder("credits", CreditMessage)

/**
 * The actors' side of the credits stream. Each partition's durable consumer is shared by every instance, and one
 * instance at a time holds a partition (a lease each), so a request's credits are applied in block order. What
 * arrived while a batch committed is the next batch: its events go through the actor host in one commit (dedupe by
 * credit id, so a redelivered or re-published credit changes nothing), with the credits' `applied_at` in the same
 * transaction; the messages are acked only after it.
 */
export const makeCreditConsumer = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const host = yield* ActorHost
  const stream = yield* EventStream

  /** Applies one batch of messages in one commit, then acks them (or offers them again if the commit failed). */
  const applyBatch = Effect.fn("CreditConsumer.applyBatch")(function* (
    messages: ReadonlyArray<StreamMessage>
  ) {
    const parsed: Array<CreditMessage> = []
    for (const message of messages) {
      const m = yield* decodeCreditMessage(message)
      if (Option.isSome(m)) parsed.push(m.value)
    }
    if (parsed.length === 0) return
    const at = new Date(yield* Clock.currentTimeMillis)
    const credits = parsed.filter((m) => m.kind === "credit")
    const reorgs = parsed.filter((m) => m.kind === "reorg")
    yield* host
      .applyMany(
        parsed.map(eventOf),
        Effect.zipRight(
          stampCredits(sql, credits, "applied_at", at),
          stampCredits(sql, reorgs, "reorg_applied_at", at)
        )
      )
      .pipe(
        Effect.matchCauseEffect({
          onSuccess: () => Effect.sync(() => settleAll(messages, (m) => m.ack())),
          onFailure: (cause) =>
            Effect.zipRight(
              Effect.logWarning("applying credits failed; offered again", cause),
              Effect.sync(() => settleAll(messages, (m) => m.nak(RETRY_DELAY_MS)))
            )
        }),
        Effect.withSpan("CreditConsumer.apply", { attributes: { "credits.count": parsed.length } })
      )
  })

  /**
   * Consumes one partition until interrupted (the lease is lost, or the service stops). Untraced: it lasts the
   * whole lease, and a span around it would put every batch of the lease in one trace.
   */
  const consumePartition = Effect.fnUntraced(function* (partition: number) {
    const inbox = yield* consumeIntoQueue(stream, creditConsumer(partition), APPLY_BATCH * 2)
    while (true) {
      const first = yield* Queue.take(inbox)
      const rest = yield* Queue.takeUpTo(inbox, APPLY_BATCH - 1)
      // A batch under way finishes (and is acked) before a shutdown or a lost lease stops the partition.
      yield* Effect.uninterruptible(applyBatch([first, ...rest]))
    }
  }, Effect.scoped)

  return { applyBatch, consumePartition } as const
})

/** The consumer as a service: what CreditConsumerLive runs, and what benchmarks drive partition by partition. */
export class CreditConsumer extends Effect.Service<CreditConsumer>()("deposits/CreditConsumer", {
  effect: makeCreditConsumer,
  dependencies: [ActorHost.Default]
}) {}

/** Lease name of a credits partition. */
export const partitionLease = (partition: number) => `credits-${partition}`

/** Credits are consumed on every instance where a chain is configured, a partition by one instance at a time. */
export const CreditConsumerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* chainSettings
    if (Option.isNone(config.tokenAddress)) return
    const consumer = yield* CreditConsumer
    const lease = yield* Lease
    for (let p = 0; p < CREDIT_PARTITIONS; p++) {
      const run = consumer.consumePartition(p).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning(`credits partition ${p} stopped`, cause)),
        Effect.zipRight(Effect.sleep("1 second")),
        Effect.forever
      )
      yield* Effect.forkScoped(lease.whileHolding(partitionLease(p), run))
    }
  })
).pipe(Layer.provide(CreditConsumer.Default))
