import { assert, layer } from "@effect/vitest"
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import {
  CREDITS_STREAM,
  deploymentStreamName,
  type StreamDefinition,
  STREAMS,
  WEBHOOKS_STREAM
} from "../../../infra/jetstream/Streams"
import type { ChainService } from "../../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import type { LocalChain } from "../../support/LocalChain"
import { natsCluster, type NatsCluster } from "../../support/NatsCluster"
import { readyRequest } from "../../support/Payer"
import { scopedChainService, scopedLocalChain } from "../../support/scopedChainService"

/**
 * Issue 39: a node of a three-node JetStream cluster dies mid-burst. With `NATS_STREAM_REPLICAS=3` the streams and
 * their consumers keep a copy on the two nodes left, a new leader is elected, the service's connection moves to a
 * live node (`NATS_URL` names all three), and publishing and consuming carry on. The node is SIGKILLed (the leader
 * of a stream), later started again; once with its store wiped while it was down, so the cluster must catch it up.
 * Meanwhile a merchant keeps creating requests and queueing test events: none of its calls may get a 5xx but 503.
 * Afterwards nothing is lost and nothing doubled: every credit applied once, every request deposited and settled
 * once, every event delivered with a 2xx exactly once to the endpoint, every attempt with the same id and bytes,
 * the outbox and the delivery jobs empty.
 */
const HOST = "hooks.node-loss.test"
const tls = makeCertificates(HOST)
/** Deposit requests paid per round: half before the node dies, half while it is down. */
const REQUESTS = 10
const AMOUNT = 2_000_000n
/** How long the node stays down while the burst goes on (streams and consumers went on about 11 s after the kill here). */
const DOWN_MS = 20_000
/** The receiver fails every third attempt, so some events are retried across the loss. */
const answerFor = (n: number) => (n % 3 === 1 ? 500 : 200)

class NodeLoss extends Context.Tag("test/NodeLoss")<
  NodeLoss,
  {
    readonly local: LocalChain
    readonly cluster: NatsCluster
    readonly receiver: Awaited<ReturnType<typeof startReceiver>>
    readonly running: ChainService
    /** The test's own view of the streams (stream info: leader, replicas, configuration). */
    readonly jsm: JetStreamManager
    readonly namespace: string
    readonly webhookId: string
  }
>() {}

const NodeLossLive = Layer.scoped(
  NodeLoss,
  Effect.gen(function* () {
    const local = yield* scopedLocalChain()
    const cluster = yield* Effect.acquireRelease(Effect.promise(natsCluster), (c) => Effect.promise(c.stop))
    const receiver = yield* Effect.acquireRelease(
      Effect.promise(() => startReceiver(tls, answerFor)),
      (r) => Effect.promise(() => r.close())
    )
    const running = yield* scopedChainService(local, {
      mineWhileWaiting: true,
      config: {
        natsUrl: Option.some(cluster.urls.join(",")),
        natsStreamReplicas: 3,
        webhookFirstRetryMs: 300
      },
      service: { webhookNetwork: localReceiverNetwork(HOST, tls.ca) }
    })
    const nc = yield* Effect.acquireRelease(
      Effect.promise(() =>
        connect({ servers: cluster.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
      ),
      (c) => Effect.promise(() => c.close())
    )
    const jsm = yield* Effect.promise(() => jetstreamManager(nc, { timeout: 2_000 }))
    const namespace = (yield* Effect.promise(() =>
      running.db.query<{ stream_namespace: string }>("select stream_namespace from deployment")
    )).rows[0]!.stream_namespace
    const hook = yield* Effect.promise(() =>
      running.api.call<{ id: string }>("POST", "/v1/webhooks", {
        url: `https://${HOST}:${receiver.port}/hooks`
      })
    )
    if (hook.status !== 201) throw new Error(`webhook endpoint not made: ${hook.status}`)
    return { local, cluster, receiver, running, jsm, namespace, webhookId: hook.body.id }
  })
)

const countNow = async (running: ChainService, query: string, values: ReadonlyArray<unknown> = []) =>
  Number((await running.db.query<{ n: string }>(query, [...values])).rows[0]?.n ?? 0)
const count = (running: ChainService, query: string, values: ReadonlyArray<unknown> = []) =>
  Effect.promise(() => countNow(running, query, values))

const uuidsOf = (ids: ReadonlyArray<string>) => ids.map((id) => id.slice(3))

/**
 * A merchant at work until stopped: creates (with idempotency keys), reads, and test events queued to the
 * endpoint, two at a time. Every answer's status is kept (0: no answer at all).
 */
const merchantTraffic = (running: ChainService, webhookId: string) => {
  const statuses: Array<number> = []
  let stopped = false
  const loop = async () => {
    const refs = await running.api.setup()
    while (!stopped) {
      const made = await running.api
        .call<{ id: string }>(
          "POST",
          "/v1/deposit-requests",
          { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
          { "idempotency-key": randomUUID() }
        )
        .catch(() => ({ status: 0, body: { id: "" } }))
      statuses.push(made.status)
      if (made.status === 201) {
        const read = await running.api
          .call("GET", `/v1/deposit-requests/${made.body.id}`)
          .catch(() => ({ status: 0 }))
        statuses.push(read.status)
      }
      const queued = await running.api
        .call("POST", `/v1/webhooks/${webhookId}/test`)
        .catch(() => ({ status: 0 }))
      statuses.push(queued.status)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const loops = [loop(), loop()]
  return {
    statuses,
    stop: async () => {
      stopped = true
      await Promise.all(loops)
    }
  }
}

/** One round: a burst through both streams, the leader of `target` SIGKILLed mid-way (its store wiped if asked). */
const loseANode = (target: StreamDefinition, wipe: boolean, payerIndex: number) =>
  Effect.gen(function* () {
    const { local, cluster, receiver, running, jsm, namespace, webhookId } = yield* NodeLoss
    const streamName = deploymentStreamName(target.name, namespace)
    const payer = anvilDevAccount(payerIndex)
    const requests: Array<{ id: string; address: `0x${string}` }> = []
    for (let i = 0; i < REQUESTS; i++) {
      requests.push(yield* Effect.promise(() => readyRequest({ ...running, payer }, "2.000000")))
    }
    const ids = uuidsOf(requests.map((r) => r.id))
    yield* Effect.promise(() => local.mint(payer.address, AMOUNT * BigInt(REQUESTS)))
    const ofTypeNow = (type: string) =>
      countNow(
        running,
        "select count(*) as n from lifecycle_events where type = $1 and deposit_request_id = any($2::uuid[])",
        [type, ids]
      )
    const ofType = (type: string) => Effect.promise(() => ofTypeNow(type))

    const traffic = merchantTraffic(running, webhookId)
    // The first half is paid and starts flowing through the streams.
    for (const r of requests.slice(0, REQUESTS / 2))
      yield* Effect.promise(() => local.pay(payer, r.address, AMOUNT))
    yield* Effect.promise(() =>
      local.mineUntil(async () => ((await ofTypeNow("deposit_request.deposited")) >= 2 ? true : undefined))
    )

    const leader = (yield* Effect.promise(() => jsm.streams.info(streamName))).cluster?.leader
    assert.isString(leader)
    const node = cluster.nodeNamed(leader!)
    const killedAt = Date.now()
    yield* Effect.promise(() => cluster.kill(node))
    if (wipe) cluster.wipe(node)
    const depositedAtKill = yield* ofType("deposit_request.deposited")

    // The second half is paid while the node is down.
    for (const r of requests.slice(REQUESTS / 2))
      yield* Effect.promise(() => local.pay(payer, r.address, AMOUNT))
    let newLeader: string | undefined
    while (newLeader === undefined && Date.now() - killedAt < 30_000) {
      const info = yield* Effect.promise(() => jsm.streams.info(streamName).catch(() => undefined))
      const l = info?.cluster?.leader
      if (l !== undefined && l !== "" && l !== leader) newLeader = l
      else yield* Effect.sleep("100 millis")
    }
    const electedMs = Date.now() - killedAt
    assert.isString(newLeader, `a new leader of ${streamName}`)
    yield* Effect.promise(() =>
      local.mineUntil(async () => (Date.now() - killedAt >= DOWN_MS ? true : undefined), DOWN_MS + 5_000)
    )
    const depositedWhileDown = (yield* ofType("deposit_request.deposited")) - depositedAtKill
    const restartAt = Date.now()

    yield* Effect.promise(() => cluster.start(node))
    const restartedAt = Date.now()
    // The burst goes on a little with all three nodes, then the merchant stops.
    yield* Effect.sleep("2 seconds")
    yield* Effect.promise(traffic.stop)

    // Everything settles: every request deposited and settled, every event delivered, nothing left to send.
    yield* Effect.promise(() =>
      local.mineUntil(
        async () => ((await ofTypeNow("deposit_request.settled")) === REQUESTS ? true : undefined),
        120_000
      )
    )
    const unfinished = () =>
      Effect.all([
        count(running, "select count(*) as n from outbox where published_at is null"),
        count(running, "select count(*) as n from webhook_jobs where state <> 'succeeded'"),
        count(running, "select count(*) as n from chain_credits where applied_at is null")
      ]).pipe(Effect.map((ns) => ns.reduce((a, b) => a + b, 0)))
    const until = Date.now() + 90_000
    while (Date.now() < until && (yield* unfinished()) > 0) yield* Effect.sleep("200 millis")
    const settledMs = Date.now() - killedAt

    // The restarted node caught up: it is a current replica of the stream again.
    const caughtUp = () =>
      Effect.promise(async () => {
        const info = await jsm.streams.info(streamName)
        const all = [
          { name: info.cluster?.leader, current: true },
          ...(info.cluster?.replicas ?? []).map((r) => ({ name: r.name, current: r.current }))
        ]
        return all.some((r) => r.name === leader && r.current)
      })
    const catchUpUntil = Date.now() + 30_000
    while (Date.now() < catchUpUntil && !(yield* caughtUp())) yield* Effect.sleep("200 millis")

    // What the receiver saw: each attempt with its answer (the receiver answers by arrival order).
    const attempts = receiver.received.map((r, i) => ({
      id: String(r.headers["service-event-id"]),
      body: r.body.toString("utf8"),
      status: answerFor(i + 1)
    }))
    const events = (yield* Effect.promise(() =>
      running.db.query<{ id: string; body: string; occurred_at: Date }>(
        "select id, body, occurred_at from lifecycle_events"
      )
    )).rows
    // Work that could only go through the streams after the kill: credits paid after it, events made after it.
    const madeAfterKill = new Set(
      events.filter((e) => e.occurred_at.getTime() > killedAt).map((e) => `evt_${e.id}`)
    )
    const firstDelivery = receiver.received.find(
      (r) => r.at > killedAt && madeAfterKill.has(String(r.headers["service-event-id"]))
    )
    const firstDeliveryMs = firstDelivery === undefined ? Number.NaN : firstDelivery.at - killedAt
    const firstCreditMs = yield* Effect.promise(async () => {
      const first = await running.db.query<{ at: Date | null }>(
        "select min(occurred_at) as at from lifecycle_events where type = 'deposit_request.deposited' and deposit_request_id = any($1::uuid[])",
        [uuidsOf(requests.slice(REQUESTS / 2).map((r) => r.id))]
      )
      const at = first.rows[0]?.at
      return at == null ? Number.NaN : at.getTime() - killedAt
    })
    const credits = yield* count(
      running,
      "select count(*) as n from chain_credits where deposit_request_id = any($1::uuid[])",
      [ids]
    )
    const creditEvents = yield* count(
      running,
      "select count(*) as n from applied_events where event_id like 'credit:%' and deposit_request_id = any($1::uuid[])",
      [ids]
    )
    const statuses = new Map<number, number>()
    for (const s of traffic.statuses) statuses.set(s, (statuses.get(s) ?? 0) + 1)
    console.log(
      `${wipe ? "wiped" : "kept"} store; killed ${leader} (leader of ${streamName}); new leader ${newLeader} in ` +
        `${electedMs} ms; deposited at the kill ${depositedAtKill}, while down ${depositedWhileDown}; first credit ` +
        `paid after the kill applied at ${firstCreditMs} ms, first event made after it delivered at ` +
        `${firstDeliveryMs} ms; restarted at ${restartAt - killedAt} ms (up ${restartedAt - killedAt}); everything settled ${settledMs} ms after the kill; restarted node current: ` +
        `${yield* caughtUp()}; events ${events.length}, attempts ${attempts.length}; merchant calls ` +
        `${traffic.statuses.length} ${JSON.stringify(Object.fromEntries(statuses))}`
    )

    // Three replicas: both streams went on with two nodes, before the lost one came back.
    assert.isBelow(
      firstCreditMs,
      restartAt - killedAt,
      "a credit paid after the kill applied while it was down"
    )
    assert.isBelow(
      firstDeliveryMs,
      restartAt - killedAt,
      "an event made after the kill delivered while it was down"
    )
    // Nothing lost, nothing doubled.
    assert.strictEqual(credits, REQUESTS)
    assert.strictEqual(creditEvents, REQUESTS)
    assert.strictEqual(yield* ofType("deposit_request.deposited"), REQUESTS)
    assert.strictEqual(yield* ofType("deposit_request.settled"), REQUESTS)
    assert.strictEqual(yield* unfinished(), 0, "outbox, delivery jobs and credits all done")
    assert.isTrue(yield* caughtUp(), `${leader} is a current replica again`)
    const eventIds = new Set(events.map((e) => `evt_${e.id}`))
    const bodyOf = new Map(events.map((e) => [`evt_${e.id}`, e.body]))
    const succeeded = new Map<string, number>()
    for (const a of attempts) {
      assert.isTrue(eventIds.has(a.id), `delivered ${a.id} is an event of ours`)
      assert.strictEqual(a.body, bodyOf.get(a.id), `every attempt of ${a.id} carries its bytes`)
      if (a.status < 300) succeeded.set(a.id, (succeeded.get(a.id) ?? 0) + 1)
    }
    for (const id of eventIds) assert.strictEqual(succeeded.get(id), 1, `${id} delivered with a 2xx once`)
    // The merchant's calls: answered, and never a 5xx other than 503.
    assert.isAbove(traffic.statuses.length, 0)
    for (const [status, n] of statuses)
      assert.isTrue(status !== 0 && (status < 500 || status === 503), `${n} answers ${status}`)
  })

// Real time throughout: the service, the cluster and the chain run on the wall clock, so the test does too.
layer(NodeLossLive, { timeout: 90_000, excludeTestServices: true })("a NATS node lost mid-burst", (it) => {
  it.effect("the service's streams have the replicas of NATS_STREAM_REPLICAS", () =>
    Effect.gen(function* () {
      const { jsm, namespace } = yield* NodeLoss
      for (const stream of STREAMS) {
        const info = yield* Effect.promise(() =>
          jsm.streams.info(deploymentStreamName(stream.name, namespace))
        )
        assert.strictEqual(info.config.num_replicas, 3, stream.name)
        assert.lengthOf(info.cluster?.replicas ?? [], 2, `${stream.name} has two followers`)
      }
    })
  )

  it.effect(
    "the credits stream's leader SIGKILLed and restarted: nothing lost, nothing doubled",
    () => loseANode(CREDITS_STREAM, false, 6),
    300_000
  )

  it.effect(
    "the webhooks stream's leader SIGKILLed, its store wiped, restarted: nothing lost, nothing doubled",
    () => loseANode(WEBHOOKS_STREAM, true, 7),
    300_000
  )
})
