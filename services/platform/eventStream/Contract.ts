import { Data, type Effect, type Scope } from "effect"
import type { ConsumerDefinition } from "../../../infra/jetstream/Streams"

export class EventStreamError extends Data.TaggedError("EventStreamError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** A message delivered to a consumer; it stays with this consumer until acked, nak'd, termed or its wait runs out. */
export interface StreamMessage {
  readonly subject: string
  readonly data: string
  /** The stream's sequence number: each publish that stored a message gave it a new one. */
  readonly seq: number
  /** How many times it was delivered, this time included. */
  readonly deliveries: number
  readonly ack: () => void
  /** Delivered again after `delayMs` (at once without one). */
  readonly nak: (delayMs?: number) => void
  /** Never delivered again. */
  readonly term: () => void
  /** Restarts the ack wait: still being worked on. */
  readonly working: () => void
}

export interface Publication {
  readonly subject: string
  readonly data: string
  /** The stream keeps one message per id within its duplicate window: a repeated publish stores nothing. */
  readonly msgId: string
}

/**
 * Durable queues between the service's parts: the chain credits on their way to the actors and the webhook jobs on
 * their way to the dispatchers. JetStream when `NATS_URL` is set; an in-process stand-in with the same behaviour
 * otherwise (the embedded defaults). Either may lose what it holds (JetStream 2.9 syncs lazily; the in-process
 * one lives as long as the process): PostgreSQL is the record, and the relays publish from it again.
 */
export interface EventStreamShape {
  readonly kind: "jetstream" | "in-process"
  /** Publishes the messages (pipelined) and waits for every ack; the stream sequence of each, in order. */
  readonly publish: (
    messages: ReadonlyArray<Publication>
  ) => Effect.Effect<ReadonlyArray<number>, EventStreamError>
  /**
   * Hands the consumer's messages to `onMessage` (synchronously, in stream order) until the scope closes, with at
   * most `buffer` delivered to this instance and not yet acked. Consumers are shared: several instances consuming
   * one consumer each get some of its messages.
   */
  readonly consume: (
    consumer: ConsumerDefinition,
    buffer: number,
    onMessage: (message: StreamMessage) => void
  ) => Effect.Effect<void, EventStreamError, Scope.Scope>
  /** When the stream's current store began (ms): what was published before it was lost with an older store. */
  readonly epoch: (stream: string) => Effect.Effect<number, EventStreamError>
}
