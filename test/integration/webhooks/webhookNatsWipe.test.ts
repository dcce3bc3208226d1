import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { ActorHost } from "../../../services/actors/ActorHost"
import type { MerchantClient } from "../../support/Api"
import { eventually } from "../../support/eventually"
import { localReceiverNetwork, makeCertificates, type startReceiver } from "../../support/HttpsReceiver"
import { privateNats } from "../../support/NatsServer"
import type { RunningService } from "../../support/Service"
import { newMerchantClient, onService, scopedReceiver, scopedService } from "../../support/scopedResources"

/**
 * Issue 7 (and 20): NATS stopped mid-flow and restarted with its store wiped loses no event. Events are written
 * with the state change (outbox), their delivery jobs are rows in PostgreSQL, and JetStream carries each job's
 * message: a broker that vanishes (and comes back empty) has its jobs published again from PostgreSQL, so it may
 * delay a delivery, never lose or repeat one.
 */
const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

/** A private NATS the test can kill and wipe, a receiver, and the service on both with its merchant. */
class Fixture extends Context.Tag("test/NatsWipeFixture")<
  Fixture,
  {
    readonly nats: Awaited<ReturnType<typeof privateNats>>
    readonly receiver: Awaited<ReturnType<typeof startReceiver>>
    readonly service: RunningService
    readonly api: MerchantClient
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const nats = yield* Effect.acquireRelease(Effect.promise(privateNats), (n) => Effect.promise(n.stop))
    const receiver = yield* scopedReceiver(tls, () => 200)
    const service = yield* scopedService({
      webhookNetwork: localReceiverNetwork(HOST, tls.ca),
      config: { natsUrl: Option.some(nats.url), webhookFirstRetryMs: 200, rateLimitCapacity: 10_000 }
    })
    return { nats, receiver, service, api: yield* newMerchantClient(service) }
  })
)

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("NATS wiped mid-flow", () => {
    it.effect("delivers every event exactly once when the broker dies, loses its store and comes back", () =>
      Effect.gen(function* () {
        const { nats, receiver, service, api } = yield* Fixture
        const call = <T>(...args: Parameters<MerchantClient["call"]>) =>
          Effect.promise(() => api.call<T>(...args))
        yield* call("POST", "/v1/webhooks", { url: `https://${HOST}:${receiver.port}/hooks` })
        const refs = yield* Effect.promise(() => api.setup())
        const ids: Array<string> = []
        for (let i = 0; i < 6; i++) {
          const created = yield* call<{ id: string }>(
            "POST",
            "/v1/deposit-requests",
            { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
            { "idempotency-key": `wipe-${Date.now()}-${i}` }
          )
          assert.strictEqual(created.status, 201)
          ids.push(created.body.id.slice(3))
        }
        const makeReady = (uuid: string) =>
          onService(
            service,
            Effect.flatMap(ActorHost, (h) =>
              h.apply(uuid, `wipe-attest-${uuid}`, {
                type: "payer.wallet_attested",
                at: new Date().toISOString(),
                wallet: "0x1111111111111111111111111111111111111111",
                address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
              })
            )
          )
        const readyEvents = () =>
          new Set(
            receiver.received
              .filter((r) => r.headers["service-event-type"] === "deposit_request.ready")
              .map((r) => String(r.headers["service-event-id"]))
          )

        // Two changes while the broker is up: delivered as usual.
        yield* makeReady(ids[0]!)
        yield* makeReady(ids[1]!)
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => readyEvents().size === 2),
            20_000
          )
        )

        // The broker dies and its store is wiped; changes keep committing meanwhile.
        yield* Effect.promise(nats.killAndWipe)
        yield* makeReady(ids[2]!)
        yield* makeReady(ids[3]!)
        // It comes back empty on the same address; more changes follow.
        yield* Effect.promise(nats.start)
        yield* makeReady(ids[4]!)
        yield* makeReady(ids[5]!)

        assert.isTrue(
          yield* eventually(
            Effect.sync(() => readyEvents().size === 6),
            20_000
          )
        )
        // Exactly once each: no event was delivered twice (every answer was 200), and each request has its event.
        const ready = receiver.received.filter(
          (r) => r.headers["service-event-type"] === "deposit_request.ready"
        )
        assert.lengthOf(ready, 6)
        const about = ready.map(
          (r) => (JSON.parse(r.body.toString("utf8")) as { data: { deposit_request: { id: string } } }).data
        )
        assert.deepStrictEqual(new Set(about.map((d) => d.deposit_request.id.slice(3))), new Set(ids))
      })
    )
  })
})
