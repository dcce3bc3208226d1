import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  JetStreamApiError,
  JetStreamApiCodes,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
  jetstreamManager,
  RetentionPolicy,
  type StreamConfig,
  StorageType
} from "@nats-io/jetstream"
import type { NatsConnection } from "@nats-io/transport-node"
import { Effect } from "effect"
import {
  type ConsumerDefinition,
  CONSUMERS,
  deploymentStreamName,
  DUPLICATE_WINDOW_MS,
  STREAMS
} from "../../../infra/jetstream/Streams"
import { EventStreamError, type EventStreamShape, type StreamMessage } from "./Contract"

const nanos = (ms: number) => ms * 1_000_000
/** How long one pull waits on the server: a pull lost with a restarted server is replaced within it. */
const PULL_EXPIRES_MS = 5_000
const RESUBSCRIBE_DELAY_MS = 250
/** Notices that the pull is gone with the server's store, or the server went silent. */
const LOST = new Set(["consumer_not_found", "stream_not_found", "consumer_deleted", "heartbeats_missed"])
/** How long a publish waits for its ack. */
const PUBLISH_TIMEOUT_MS = 5_000
/** JetStream's answer to a stream declared again with another configuration (another replica count, say). */
const STREAM_NAME_IN_USE = 10058
/** JetStream's answer to more than one replica on a server that is not part of a cluster. */
const REPLICAS_NEED_CLUSTER = 10074

export interface JetStreamOptions {
  /** Each stream's replicas (`NATS_STREAM_REPLICAS`); the consumers inherit their stream's. */
  readonly replicas: number
}

/** What the server said, and what the operator can do about it, for a stream it would not take as declared. */
const refusedStream = (name: string, replicas: number, cause: JetStreamApiError) => {
  const said = cause.message
  const hint =
    cause.code === REPLICAS_NEED_CLUSTER
      ? "this NATS server is not in a JetStream cluster: set NATS_STREAM_REPLICAS=1, or point NATS_URL at a cluster"
      : "NATS_STREAM_REPLICAS must not exceed the cluster's JetStream servers; a stream the server will not update " +
        "can be deleted (nats stream rm): the service declares it again and publishes what it carried again " +
        "from PostgreSQL"
  return new Error(`NATS_STREAM_REPLICAS=${replicas}: the server refused stream ${name} (${said}); ${hint}`, {
    cause
  })
}

const messageOf = (m: JsMsg): StreamMessage => ({
  subject: m.subject,
  data: m.string(),
  seq: m.seq,
  deliveries: m.info.deliveryCount,
  ack: () => m.ack(),
  nak: (delayMs) => m.nak(delayMs),
  term: () => m.term(),
  working: () => m.working()
})

/**
 * JetStream on the machines' nats-server 2.9. The streams and consumers are declared (idempotently) at start and
 * again whenever a publish or a consumer finds them missing — a server that came back with its store wiped — and
 * each stream's creation time is its epoch, which tells the relays what the store lost.
 *
 * Each stream has `replicas` copies (on a cluster, 3 lets a stream and its consumers survive a node's loss). A
 * stream found with another configuration — the replica count changed since it was made — is updated in place:
 * nats-server 2.9 moves a stream between replica counts with an update, keeping its messages, and consumers that
 * leave their replicas unset follow their stream's. A server that refuses stops the start with what to do.
 */
export const makeJetStream = (
  nc: NatsConnection,
  namespace: string,
  options: JetStreamOptions = { replicas: 1 }
) =>
  Effect.gen(function* () {
    const streamName = (name: string) => deploymentStreamName(name, namespace)
    const subject = (logical: string) => `${namespace}.${logical}`
    const jsm: JetStreamManager = yield* Effect.tryPromise({
      try: () => jetstreamManager(nc),
      catch: (cause) =>
        new EventStreamError({ message: "JetStream is not enabled on the NATS server", cause })
    })
    const js: JetStreamClient = jsm.jetstream()

    const declareStream = async (config: Partial<StreamConfig> & { readonly name: string }) => {
      try {
        await jsm.streams.add(config)
      } catch (cause) {
        // No answer (a timeout, an election under way) is not a refusal: it goes up as it is, to be tried again.
        if (!(cause instanceof JetStreamApiError)) throw cause
        if (cause.code !== STREAM_NAME_IN_USE) throw refusedStream(config.name, options.replicas, cause)
        const { name, ...wanted } = config
        await jsm.streams.update(name, wanted).catch((refused: unknown) => {
          throw refused instanceof JetStreamApiError
            ? refusedStream(name, options.replicas, refused)
            : refused
        })
      }
    }

    const declare = async () => {
      for (const stream of STREAMS) {
        await declareStream({
          name: streamName(stream.name),
          subjects: stream.subjects.map(subject),
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          duplicate_window: nanos(DUPLICATE_WINDOW_MS),
          num_replicas: options.replicas
        })
      }
      // Each consumer's replicas are set as its stream's, not left to follow it: on nats-server 2.9 a consumer that
      // inherits them was seen to stay on one replica after its stream moved to three (so a node's loss would lose
      // its place). An existing consumer is moved by an update, which keeps its place.
      for (const consumer of CONSUMERS) {
        const stream = streamName(consumer.stream)
        const existing = await jsm.consumers.info(stream, consumer.name).catch((e: unknown) => {
          if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.ConsumerNotFound)
            return undefined
          throw e
        })
        if (existing === undefined) {
          await jsm.consumers.add(stream, {
            durable_name: consumer.name,
            filter_subject: subject(consumer.filterSubject),
            ack_policy: AckPolicy.Explicit,
            deliver_policy: DeliverPolicy.All,
            ack_wait: nanos(consumer.ackWaitMs),
            max_ack_pending: consumer.maxAckPending,
            max_deliver: -1,
            num_replicas: options.replicas
          })
        } else {
          const wanted = {
            ack_wait: nanos(consumer.ackWaitMs),
            max_ack_pending: consumer.maxAckPending,
            num_replicas: options.replicas
          }
          if (
            existing.config.ack_wait !== wanted.ack_wait ||
            existing.config.max_ack_pending !== wanted.max_ack_pending ||
            existing.config.num_replicas !== wanted.num_replicas
          )
            await jsm.consumers.update(stream, consumer.name, wanted)
        }
      }
    }
    // One declaration at a time; callers that find something missing while one runs share it.
    let declaring: Promise<void> | undefined
    const redeclare = () => {
      declaring ??= declare().finally(() => {
        declaring = undefined
      })
      return declaring
    }
    yield* Effect.tryPromise({
      try: redeclare,
      catch: (cause) =>
        new EventStreamError({
          message: `cannot declare the JetStream streams: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    })

    const publishAll = (messages: ReadonlyArray<{ subject: string; data: string; msgId: string }>) =>
      Promise.all(
        messages.map((m) =>
          js.publish(subject(m.subject), m.data, { msgID: m.msgId, timeout: PUBLISH_TIMEOUT_MS })
        )
      ).then((acks) => acks.map((a) => a.seq))

    /**
     * Pulls from a consumer until stopped. A consumer or stream found missing (the server came back with its store
     * wiped), or a server gone silent, ends the pull: the streams are declared again and a new pull begins, rather
     * than waiting for the client's own slow recovery (up to the pull's expiry).
     */
    const follow = async (
      consumer: ConsumerDefinition,
      buffer: number,
      onMessage: (message: StreamMessage) => void,
      state: { stopped: boolean; current: ConsumerMessages | undefined }
    ) => {
      while (!state.stopped) {
        try {
          const c = await js.consumers
            .get(streamName(consumer.stream), consumer.name)
            .catch(() => redeclare().then(() => js.consumers.get(streamName(consumer.stream), consumer.name)))
          if (state.stopped) return
          const messages = await c.consume({
            max_messages: buffer,
            expires: PULL_EXPIRES_MS,
            callback: (m) => onMessage(messageOf(m))
          })
          state.current = messages
          // Stopped while this pull was being set up: the release could not close it.
          if (state.stopped) {
            await messages.close().catch(() => undefined)
            return
          }
          for await (const status of messages.status()) {
            if (LOST.has(status.type)) break
          }
          await messages.close().catch(() => undefined)
          if (!state.stopped) await redeclare().catch(() => undefined)
        } catch {
          // No server, or none with JetStream yet: try again shortly.
        }
        if (!state.stopped) await new Promise((resolve) => setTimeout(resolve, RESUBSCRIBE_DELAY_MS))
      }
    }

    const shape: EventStreamShape = {
      kind: "jetstream",
      publish: (messages) =>
        Effect.tryPromise({
          // A stream that is gone (a wiped store) answers "no responders": declare it again and publish once more.
          try: () => publishAll(messages).catch(() => redeclare().then(() => publishAll(messages))),
          catch: (cause) => new EventStreamError({ message: "JetStream publish failed", cause })
        }),
      consume: (consumer: ConsumerDefinition, buffer, onMessage) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            const state: { stopped: boolean; current: ConsumerMessages | undefined } = {
              stopped: false,
              current: undefined
            }
            void follow(consumer, buffer, onMessage, state)
            return state
          }),
          (state) =>
            Effect.promise(async () => {
              state.stopped = true
              await state.current?.close().catch(() => undefined)
            })
        ).pipe(Effect.asVoid),
      // Read from the server each time: another instance may have declared the stream again since.
      epoch: (stream) =>
        Effect.tryPromise({
          try: () =>
            jsm.streams
              .info(streamName(stream))
              .catch(() => redeclare().then(() => jsm.streams.info(streamName(stream))))
              .then((info) => Date.parse(info.created)),
          catch: (cause) => new EventStreamError({ message: `no epoch for ${stream}`, cause })
        })
    }
    return shape
  })
