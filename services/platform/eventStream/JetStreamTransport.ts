import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
  jetstreamManager,
  RetentionPolicy,
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
 */
export const makeJetStream = (nc: NatsConnection, namespace: string) =>
  Effect.gen(function* () {
    const streamName = (name: string) => deploymentStreamName(name, namespace)
    const subject = (logical: string) => `${namespace}.${logical}`
    const jsm: JetStreamManager = yield* Effect.tryPromise({
      try: () => jetstreamManager(nc),
      catch: (cause) =>
        new EventStreamError({ message: "JetStream is not enabled on the NATS server", cause })
    })
    const js: JetStreamClient = jsm.jetstream()

    const declare = async () => {
      for (const stream of STREAMS) {
        await jsm.streams.add({
          name: streamName(stream.name),
          subjects: stream.subjects.map(subject),
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          duplicate_window: nanos(DUPLICATE_WINDOW_MS)
        })
      }
      for (const consumer of CONSUMERS) {
        await jsm.consumers.add(streamName(consumer.stream), {
          durable_name: consumer.name,
          filter_subject: subject(consumer.filterSubject),
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: nanos(consumer.ackWaitMs),
          max_ack_pending: consumer.maxAckPending,
          max_deliver: -1
        })
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
      catch: (cause) => new EventStreamError({ message: "cannot declare the JetStream streams", cause })
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
