import { SqlClient } from "@effect/sql"
import { Clock, Config, Context, Duration, Effect, Layer, Option, Queue } from "effect"
import type { ConsumerDefinition } from "../../../infra/jetstream/Streams"
import type { NatsConnection } from "@nats-io/transport-node"
import { Bus } from "../Bus"
import { withMethodSpans } from "../Spans"
import type { EventStreamShape, StreamMessage } from "./Contract"
import { makeInProcessStream } from "./InProcessStream"
import { makeJetStream } from "./JetStreamTransport"

export {
  EventStreamError,
  type EventStreamShape,
  type Publication,
  type StreamMessage
} from "./Contract"

/**
 * `NATS_STREAM_REPLICAS`: the copies JetStream keeps of each stream (and its consumers): 1 on a single server, 3 on
 * a cluster of three or more so that publishing and consuming go on when a node dies. A stream made with another
 * count is updated to this one at start; every instance of a deployment must use the same.
 */
export const natsStreamReplicasSetting = Config.integer("NATS_STREAM_REPLICAS").pipe(
  Config.withDefault(1),
  Config.validate({
    message:
      "NATS_STREAM_REPLICAS: must be from 1 to 5 (JetStream's most), and no more than the cluster's servers",
    validation: (n) => n >= 1 && n <= 5
  })
)

/**
 * The event stream port: one layer per implementation (`inProcess`, `jetStream` over the bus's NATS connection, in
 * the deployment's own streams); the composition root chooses (`src/app/Ports.ts`, with the bus, from `NATS_URL`).
 */
export class EventStream extends Context.Tag("deposits/EventStream")<EventStream, EventStreamShape>() {
  static readonly inProcess = Layer.sync(EventStream, () => traced(makeInProcessStream()))
  static readonly jetStream = Layer.scoped(
    EventStream,
    Effect.gen(function* () {
      const bus = yield* Bus
      if (Option.isNone(bus.nats)) return yield* Effect.dieMessage("JetStream needs a bus over NATS")
      return yield* overJetStream(bus.nats.value)
    })
  )
}

const overJetStream = (nc: NatsConnection) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ stream_namespace: string }>`select stream_namespace from deployment`
    const replicas = yield* natsStreamReplicasSetting
    return traced(yield* makeJetStream(nc, rows[0]?.stream_namespace ?? "default", { replicas }))
  })

/** Publications and consumers are per batch and per worker, not per message: each call is a span. */
const traced = (stream: EventStreamShape) =>
  withMethodSpans("EventStream", stream, ["publish", "consume", "epoch"])

/** A message still unconsumed this long after its publication is published again (it may be lost in a crash). */
export const REPUBLISH_AFTER_MS = 30_000
/** How often the relays look for what to publish again. */
export const REPUBLISH_EVERY = Duration.seconds(1)

/**
 * What was published before this may be lost: publications before the stream's store began (a server that came
 * back empty) or more than REPUBLISH_AFTER_MS ago. The relays publish such rows again if still unconsumed.
 */
export const mayBeLostBefore = (stream: EventStreamShape, streamName: string) =>
  Effect.gen(function* () {
    const epoch = yield* stream.epoch(streamName)
    const now = yield* Clock.currentTimeMillis
    return new Date(Math.max(epoch, now - REPUBLISH_AFTER_MS))
  })

/**
 * A consumer's messages for this instance, queued for its workers, until the scope closes: then delivery stops and
 * the messages still queued are given back at once (`nak`), not left to their ack wait.
 */
export const consumeIntoQueue = (stream: EventStreamShape, consumer: ConsumerDefinition, buffer: number) =>
  Effect.gen(function* () {
    const inbox = yield* Queue.unbounded<StreamMessage>()
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.takeAll(inbox), (left) =>
        Effect.sync(() => {
          for (const m of left) m.nak()
        })
      )
    )
    yield* stream.consume(consumer, buffer, (m) => Queue.unsafeOffer(inbox, m))
    return inbox
  })
