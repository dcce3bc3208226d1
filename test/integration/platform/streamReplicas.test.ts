import { assert, layer } from "@effect/vitest"
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from "@nats-io/jetstream"
import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Context, Effect, Exit, Layer } from "effect"
import {
  CONSUMERS,
  deploymentStreamName,
  STREAMS,
  WEBHOOK_JOBS_SUBJECT,
  WEBHOOKS_STREAM
} from "../../../infra/jetstream/Streams"
import { makeJetStream } from "../../../services/platform/eventStream/JetStreamTransport"
import { natsCluster, type NatsCluster } from "../../support/NatsCluster"
import { privateNats } from "../../support/NatsServer"

/**
 * Issue 39: the streams' replicas are a setting (`NATS_STREAM_REPLICAS`). On a three-node cluster the streams get
 * that many copies and their consumers follow; a stream made with another count is moved to the new one in place,
 * keeping its messages; a single server asked for three says what to do instead of starting half-configured.
 */
class Servers extends Context.Tag("test/ReplicaServers")<
  Servers,
  {
    readonly cluster: NatsCluster
    readonly single: Awaited<ReturnType<typeof privateNats>>
    readonly clusterConnection: NatsConnection
    readonly singleConnection: NatsConnection
  }
>() {}

const connected = (servers: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(() => connect({ servers: [...servers], maxReconnectAttempts: -1 })),
    (nc) => Effect.promise(() => nc.close())
  )

const ServersLive = Layer.scoped(
  Servers,
  Effect.gen(function* () {
    const cluster = yield* Effect.acquireRelease(Effect.promise(natsCluster), (c) => Effect.promise(c.stop))
    const single = yield* Effect.acquireRelease(Effect.promise(privateNats), (n) => Effect.promise(n.stop))
    return {
      cluster,
      single,
      clusterConnection: yield* connected(cluster.urls),
      singleConnection: yield* connected([single.url])
    }
  })
)

const namespace = () => `r${Math.random().toString(36).slice(2, 10)}`

/** Each stream's configured replicas and the peers it has besides its leader, and the same for its consumers. */
const replicasOf = (nc: NatsConnection, ns: string) =>
  Effect.promise(async () => {
    const jsm = await jetstreamManager(nc)
    const streams = await Promise.all(
      STREAMS.map(async (s) => {
        const info = await jsm.streams.info(deploymentStreamName(s.name, ns))
        return {
          configured: info.config.num_replicas,
          followers: info.cluster?.replicas?.length ?? 0,
          messages: info.state.messages
        }
      })
    )
    const consumers = await Promise.all(
      CONSUMERS.map(async (c) => {
        // While its stream changes replicas a consumer's group is re-formed and, for a moment, not found: that is
        // "not settled yet" (-1), which the wait below polls through and an assertion after it still refuses.
        const info = await jsm.consumers
          .info(deploymentStreamName(c.stream, ns), c.name)
          .catch((e: unknown) => {
            if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.ConsumerNotFound)
              return undefined
            throw e
          })
        return info === undefined ? -1 : (info.cluster?.replicas?.length ?? 0)
      })
    )
    return { streams, consumers }
  })

/**
 * Until the stream and every consumer have this many followers. A scaled group takes a moment to form, and on a
 * machine running the whole suite at once its consumers' groups have taken over 30 s.
 */
const settledAt = (nc: NatsConnection, ns: string, followers: number) =>
  Effect.gen(function* () {
    const until = Date.now() + 75_000
    let seen = yield* replicasOf(nc, ns)
    while (
      Date.now() < until &&
      !(seen.streams.every((s) => s.followers === followers) && seen.consumers.every((n) => n === followers))
    ) {
      yield* Effect.sleep("200 millis")
      seen = yield* replicasOf(nc, ns)
    }
    return seen
  })

layer(ServersLive, { timeout: 60_000, excludeTestServices: true })("stream replicas", (it) => {
  it.scoped(
    "declares every stream with the replicas asked for; the consumers have as many",
    () =>
      Effect.gen(function* () {
        const { clusterConnection } = yield* Servers
        const ns = namespace()
        yield* makeJetStream(clusterConnection, ns, { replicas: 3 })
        const seen = yield* settledAt(clusterConnection, ns, 2)
        assert.deepStrictEqual(
          seen.streams.map((s) => [s.configured, s.followers]),
          STREAMS.map(() => [3, 2])
        )
        assert.deepStrictEqual(
          seen.consumers,
          CONSUMERS.map(() => 2)
        )
      }),
    // Two waits for groups to form, each up to settledAt's limit.
    180_000
  )

  it.scoped(
    "moves a stream made with one replica to three and back, keeping its messages",
    () =>
      Effect.gen(function* () {
        const { clusterConnection } = yield* Servers
        const ns = namespace()
        const one = yield* makeJetStream(clusterConnection, ns, { replicas: 1 })
        yield* one.publish([
          { subject: WEBHOOK_JOBS_SUBJECT, data: "kept-1", msgId: "kept-1" },
          { subject: WEBHOOK_JOBS_SUBJECT, data: "kept-2", msgId: "kept-2" }
        ])
        const before = yield* replicasOf(clusterConnection, ns)
        const webhooks = STREAMS.indexOf(WEBHOOKS_STREAM)
        assert.deepStrictEqual(before.streams[webhooks], { configured: 1, followers: 0, messages: 2 })

        // A start with the setting raised: the same streams, updated in place.
        yield* makeJetStream(clusterConnection, ns, { replicas: 3 })
        const raised = yield* settledAt(clusterConnection, ns, 2)
        assert.deepStrictEqual(raised.streams[webhooks], { configured: 3, followers: 2, messages: 2 })
        assert.isTrue(
          raised.consumers.every((n) => n === 2),
          JSON.stringify(raised)
        )

        yield* makeJetStream(clusterConnection, ns, { replicas: 1 })
        const lowered = yield* settledAt(clusterConnection, ns, 0)
        assert.deepStrictEqual(lowered.streams[webhooks], { configured: 1, followers: 0, messages: 2 })
        assert.isTrue(lowered.consumers.every((n) => n === 0))
      }),
    // Two waits for groups to form, each up to settledAt's limit.
    180_000
  )

  it.scoped("a single server asked for three replicas stops the start with what to do", () =>
    Effect.gen(function* () {
      const { singleConnection } = yield* Servers
      const fresh = namespace()
      const made = namespace()
      yield* makeJetStream(singleConnection, made, { replicas: 1 })
      // Whether the streams are new or were made with one replica, the answer is the same.
      for (const ns of [fresh, made]) {
        const exit = yield* Effect.exit(makeJetStream(singleConnection, ns, { replicas: 3 }))
        assert.isTrue(Exit.isFailure(exit))
        const message = Exit.isFailure(exit) ? String(exit.cause) : ""
        assert.include(message, "NATS_STREAM_REPLICAS=3")
        assert.include(message, "set NATS_STREAM_REPLICAS=1, or point NATS_URL at a cluster")
      }
    })
  )

  it.scoped("a cluster asked for more replicas than it has servers stops the start and says so", () =>
    Effect.gen(function* () {
      const { clusterConnection } = yield* Servers
      const exit = yield* Effect.exit(makeJetStream(clusterConnection, namespace(), { replicas: 5 }))
      assert.isTrue(Exit.isFailure(exit))
      const message = Exit.isFailure(exit) ? String(exit.cause) : ""
      assert.include(message, "NATS_STREAM_REPLICAS=5")
      assert.include(message, "must not exceed the cluster's JetStream servers")
    })
  )
})
