import { assert, describe, it } from "@effect/vitest"
import { connect } from "@nats-io/transport-node"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import {
  creditConsumer,
  creditSubject,
  WEBHOOK_CONSUMER,
  WEBHOOK_JOBS_SUBJECT,
  WEBHOOKS_STREAM
} from "../../../infra/jetstream/Streams"
import type { EventStreamShape, StreamMessage } from "../../../services/platform/eventStream/EventStream"
import { makeInProcessStream } from "../../../services/platform/eventStream/InProcessStream"
import { makeJetStream } from "../../../services/platform/eventStream/JetStreamTransport"
import { privateNats } from "../../support/NatsServer"

/**
 * The event stream's two implementations behave alike where the service relies on them: message-id dedupe, a
 * consumer shared by several listeners (each message to one), `nak` with a delay, stream order within a subject.
 * JetStream also comes back from a server that lost its store: the streams are declared again, the epoch moves on
 * and consumers pull again.
 */
let nats: Awaited<ReturnType<typeof privateNats>>
beforeAll(async () => {
  nats = await privateNats()
})
afterAll(async () => {
  await nats?.stop()
})

const collect = () => {
  const got: Array<StreamMessage & { readonly at: number }> = []
  return { got, onMessage: (m: StreamMessage) => got.push({ ...m, at: Date.now() }) }
}
const until = (check: () => boolean, ms = 10_000) =>
  Effect.promise(async () => {
    const end = Date.now() + ms
    while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
    return check()
  })
const publication = (data: string, msgId = data) => ({ subject: WEBHOOK_JOBS_SUBJECT, data, msgId })

const implementations: ReadonlyArray<
  [string, Effect.Effect<EventStreamShape, unknown, import("effect").Scope.Scope>]
> = [
  ["in process", Effect.sync(makeInProcessStream)],
  [
    "JetStream",
    Effect.flatMap(
      Effect.acquireRelease(
        Effect.promise(() =>
          connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
        ),
        (nc) => Effect.promise(() => nc.close())
      ),
      (nc) => makeJetStream(nc, `t${Math.random().toString(36).slice(2, 10)}`)
    )
  ]
]

for (const [name, make] of implementations) {
  describe(`event stream (${name})`, () => {
    it.scopedLive("stores a message id once within the window, and hands it to one listener", () =>
      Effect.gen(function* () {
        const stream = yield* make
        const a = collect()
        const b = collect()
        yield* stream.consume(WEBHOOK_CONSUMER, 10, a.onMessage)
        yield* stream.consume(WEBHOOK_CONSUMER, 10, b.onMessage)
        const first = yield* stream.publish([publication("one"), publication("two")])
        const again = yield* stream.publish([publication("one")])
        assert.deepStrictEqual(again, first.slice(0, 1))
        assert.isTrue(yield* until(() => a.got.length + b.got.length === 2))
        for (const m of [...a.got, ...b.got]) m.ack()
        yield* Effect.sleep("300 millis")
        const data = [...a.got, ...b.got].map((m) => m.data).sort()
        assert.deepStrictEqual(data, ["one", "two"])
      })
    )

    it.scopedLive("brings a nak'd message back after its delay, counting deliveries", () =>
      Effect.gen(function* () {
        const stream = yield* make
        const c = collect()
        yield* stream.consume(WEBHOOK_CONSUMER, 10, c.onMessage)
        yield* stream.publish([publication(`retry-${Date.now()}`)])
        assert.isTrue(yield* until(() => c.got.length === 1))
        const nakAt = Date.now()
        c.got[0]!.nak(600)
        assert.isTrue(yield* until(() => c.got.length === 2))
        const back = c.got[1]!
        assert.isAtLeast(back.at - nakAt, 550)
        assert.strictEqual(back.deliveries, 2)
        assert.strictEqual(back.seq, c.got[0]!.seq)
        back.ack()
      })
    )

    it.scopedLive("keeps a partition's messages in publication order", () =>
      Effect.gen(function* () {
        const stream = yield* make
        const c = collect()
        yield* stream.consume(creditConsumer(3), 1000, c.onMessage)
        const sent = Array.from({ length: 200 }, (_, i) => ({
          subject: creditSubject(3),
          data: String(i),
          msgId: `order-${Date.now()}-${i}`
        }))
        yield* stream.publish(sent)
        assert.isTrue(yield* until(() => c.got.length === 200))
        assert.deepStrictEqual(
          c.got.map((m) => m.data),
          sent.map((m) => m.data)
        )
        for (const m of c.got) m.ack()
      })
    )
  })
}

describe("event stream (JetStream) after a server lost its store", () => {
  it.scopedLive("declares its streams again, moves its epoch on and goes on delivering", () =>
    Effect.gen(function* () {
      const stream = yield* implementations[1]![1]
      const c = collect()
      yield* stream.consume(WEBHOOK_CONSUMER, 10, (m) => {
        c.onMessage(m)
        m.ack()
      })
      yield* stream.publish([publication("before")])
      assert.isTrue(yield* until(() => c.got.length === 1))
      const epochBefore = yield* stream.epoch(WEBHOOKS_STREAM.name)
      yield* Effect.promise(() => nats.killAndWipe())
      const whileDown = yield* Effect.either(stream.publish([publication("while-down")]))
      assert.isTrue(whileDown._tag === "Left")
      yield* Effect.promise(() => nats.start())
      // The next publish finds no stream, declares it again and goes through.
      const retried = yield* Effect.retry(stream.publish([publication("after")]), { times: 20 })
      assert.strictEqual(retried.length, 1)
      assert.isTrue(yield* until(() => c.got.some((m) => m.data === "after")))
      assert.isAbove(yield* stream.epoch(WEBHOOKS_STREAM.name), epochBefore)
    })
  )
})
