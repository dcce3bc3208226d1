/**
 * The JetStream streams and consumers the service uses: chain credits on their way to the actors, and webhook
 * delivery jobs on their way to the dispatchers. Both are work queues (a message leaves the stream once acked) and
 * dedupe publishes by message id; PostgreSQL holds the record of both, so a stream is only ever a transport and a
 * lost or wiped one is filled again from PostgreSQL (services/chain/CreditRelay.ts, services/webhooks/OutboxRelay.ts).
 * Only what the machines' nats-server 2.9 has: one filter subject per consumer, no per-message TTL or schedules.
 * Each stream has `NATS_STREAM_REPLICAS` copies (3 on a cluster survives a node's loss); consumers have their
 * stream's (decision 0063).
 */

/** How long a message id is remembered by a stream: a publish repeated within it is acknowledged, not stored. */
export const DUPLICATE_WINDOW_MS = 120_000

/** Credits are spread over this many partitions by request; a request's credits all travel in one, in order. */
export const CREDIT_PARTITIONS = 8

export interface StreamDefinition {
  readonly name: string
  readonly subjects: ReadonlyArray<string>
}

export interface ConsumerDefinition {
  readonly stream: string
  readonly name: string
  readonly filterSubject: string
  /** A message not acked this long after delivery goes to another consumer (its holder crashed, say). */
  readonly ackWaitMs: number
  /** Messages delivered and not yet acked, across every instance sharing the consumer. */
  readonly maxAckPending: number
}

export const CREDITS_STREAM: StreamDefinition = { name: "DEPOSITS_CREDITS", subjects: ["deposits.credits.*"] }
export const WEBHOOKS_STREAM: StreamDefinition = {
  name: "DEPOSITS_WEBHOOKS",
  subjects: ["deposits.webhooks.*"]
}
export const STREAMS: ReadonlyArray<StreamDefinition> = [CREDITS_STREAM, WEBHOOKS_STREAM]

/** A deployment's own copy of a stream: `DEPOSITS_CREDITS` is `DEPOSITS_CREDITS_<ns>` (subjects `<ns>.deposits.…`). */
export const deploymentStreamName = (name: string, namespace: string) => `${name}_${namespace.toUpperCase()}`

/** The subject of a partition's credits. */
export const creditSubject = (partition: number) => `deposits.credits.${partition}`

/** The partition of a request (its uuid's last 32 bits), the same on every instance. */
export const creditPartitionOf = (depositRequestId: string) =>
  Number.parseInt(depositRequestId.replaceAll("-", "").slice(-8), 16) % CREDIT_PARTITIONS

/** One durable pull consumer per partition, shared by every instance (one holds a partition at a time). */
export const creditConsumer = (partition: number): ConsumerDefinition => ({
  stream: CREDITS_STREAM.name,
  name: `credits-${partition}`,
  filterSubject: creditSubject(partition),
  ackWaitMs: 15_000,
  maxAckPending: 5_000
})
export const CREDIT_CONSUMERS = Array.from({ length: CREDIT_PARTITIONS }, (_, p) => creditConsumer(p))

export const WEBHOOK_JOBS_SUBJECT = "deposits.webhooks.jobs"
/**
 * One consumer shared by every dispatcher of every instance. An attempt lasts 10 s at most; a message its
 * dispatcher did not ack within the wait (it died) is delivered again, and the job's row decides whether it is due.
 */
export const WEBHOOK_CONSUMER: ConsumerDefinition = {
  stream: WEBHOOKS_STREAM.name,
  name: "webhook-deliveries",
  filterSubject: WEBHOOK_JOBS_SUBJECT,
  ackWaitMs: 30_000,
  maxAckPending: 10_000
}

export const CONSUMERS: ReadonlyArray<ConsumerDefinition> = [...CREDIT_CONSUMERS, WEBHOOK_CONSUMER]
