import { createHmac, timingSafeEqual } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { ActorHost } from "../../../services/actors/ActorHost"
import type { MerchantClient } from "../../support/Api"
import { eventually, pause } from "../../support/eventually"
import { localReceiverNetwork, makeCertificates, type startReceiver } from "../../support/HttpsReceiver"
import type { RunningService } from "../../support/Service"
import {
  newMerchantClient,
  onService,
  scopedPgClient,
  scopedReceiver,
  scopedService
} from "../../support/scopedResources"

const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

/** How many of the receiver's first requests it answers 500 (a test sets it before it sends). */
let failFirst = 0

/** The spec's verification, written independently of the service's signer. */
const verify = (header: string, secret: string, raw: Buffer, nowSeconds: number) => {
  const parts = header.split(",")
  if (parts[0] !== "v1") return false
  const t = Number(parts.find((p) => p.startsWith("t="))?.slice(2))
  const sig = parts.find((p) => p.startsWith("sha256="))?.slice(7) ?? ""
  if (!Number.isFinite(t) || Math.abs(nowSeconds - t) > 300) return false
  const expected = createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`v1.${t}.`), raw]))
    .digest()
  const given = Buffer.from(sig, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** A receiver that fails the first `failFirst` requests, and the service delivering to it with its merchant. */
class Fixture extends Context.Tag("test/WebhooksFixture")<
  Fixture,
  {
    readonly receiver: Awaited<ReturnType<typeof startReceiver>>
    readonly service: RunningService
    readonly api: MerchantClient
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const receiver = yield* scopedReceiver(tls, (n) => (n <= failFirst ? 500 : 200))
    const service = yield* scopedService({
      webhookNetwork: localReceiverNetwork(HOST, tls.ca),
      config: { webhookFirstRetryMs: 200, rateLimitCapacity: 10_000 }
    })
    return { receiver, service, api: yield* newMerchantClient(service) }
  })
)

const callWith = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))
const call = <T>(...args: Parameters<MerchantClient["call"]>) =>
  Effect.flatMap(Fixture, ({ api }) => callWith<T>(api, ...args))

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("webhook endpoints", () => {
    it.effect(
      "creates an endpoint with a whsec_ secret shown once, refuses hostile URLs, lists and reads without the secret",
      () =>
        Effect.gen(function* () {
          const { receiver } = yield* Fixture
          const created = yield* call<{ id: string; secret: string; url: string; disabled_at: null }>(
            "POST",
            "/v1/webhooks",
            { url: `https://${HOST}:${receiver.port}/hooks` }
          )
          assert.strictEqual(created.status, 201)
          assert.match(created.body.secret, /^whsec_/)
          assert.isNull(created.body.disabled_at)
          const read = yield* call<Record<string, unknown>>("GET", `/v1/webhooks/${created.body.id}`)
          assert.notProperty(read.body, "secret")
          for (const url of [
            "http://hooks.example.test/x",
            "https://127.0.0.1/x",
            "https://u:p@hooks.example.test/x",
            "https://unknown.test/x"
          ]) {
            const refused = yield* call<{ error: { code: string; param: string } }>("POST", "/v1/webhooks", {
              url
            })
            assert.strictEqual(refused.status, 400)
            assert.strictEqual(refused.body.error.param, "url")
          }
          yield* call("POST", `/v1/webhooks/${created.body.id}/disable`)
        })
    )
  })

  describe("deliveries", () => {
    it.effect(
      "delivers a lifecycle event signed over its fixed bytes, retrying failures with the same id and bytes",
      () =>
        Effect.gen(function* () {
          const { receiver, service, api } = yield* Fixture
          failFirst = 3
          receiver.received.length = 0
          const endpoint = yield* call<{ id: string; secret: string }>("POST", "/v1/webhooks", {
            url: `https://${HOST}:${receiver.port}/hooks`
          })
          const refs = yield* Effect.promise(() => api.setup())
          const created = yield* call<{ id: string }>(
            "POST",
            "/v1/deposit-requests",
            {
              amount: "7.000000",
              issuer_id: refs.issuerId,
              payout_address_id: refs.payoutAddressId,
              metadata: { order: "1" }
            },
            { "idempotency-key": `wh-${Date.now()}` }
          )
          const uuid = created.body.id.slice(3)
          yield* onService(
            service,
            Effect.flatMap(ActorHost, (h) =>
              h.apply(uuid, "wh-attest", {
                type: "payer.wallet_attested",
                at: new Date().toISOString(),
                wallet: "0x1111111111111111111111111111111111111111",
                address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
              })
            )
          )
          assert.isTrue(
            yield* eventually(
              Effect.sync(() => receiver.received.length >= 4),
              15_000
            )
          )
          const attempts = receiver.received.slice(0, 4)
          const ids = new Set(attempts.map((r) => r.headers["service-event-id"]))
          assert.strictEqual(ids.size, 1)
          assert.strictEqual(new Set(attempts.map((r) => r.body.toString("utf8"))).size, 1)
          for (const r of attempts) {
            assert.strictEqual(r.headers["content-type"], "application/json")
            assert.strictEqual(r.headers["service-event-type"], "deposit_request.ready")
            assert.isTrue(
              verify(
                String(r.headers["service-signature"]),
                endpoint.body.secret,
                r.body,
                Math.floor(Date.now() / 1000)
              )
            )
            assert.isFalse(
              verify(
                String(r.headers["service-signature"]),
                endpoint.body.secret,
                Buffer.concat([r.body, Buffer.from(" ")]),
                Math.floor(Date.now() / 1000)
              )
            )
          }
          const envelope = JSON.parse(attempts[0]!.body.toString("utf8")) as {
            id: string
            type: string
            data: { deposit_request: Record<string, unknown> }
          }
          assert.strictEqual(envelope.id, attempts[0]!.headers["service-event-id"])
          assert.deepStrictEqual(
            Object.keys(envelope.data.deposit_request).sort(),
            [
              "id",
              "status",
              "amount",
              "amount_base_units",
              "received",
              "received_base_units",
              "heading",
              "reference",
              "metadata",
              "customer_id",
              "issuer_id",
              "payer_policy_mode",
              "payer_reference",
              "verification_completed_at",
              "likely_unsolicited_at",
              "payer_wallet",
              "address",
              "wallet_bound_at",
              "expires_at",
              "created_at"
            ].sort()
          )
          // The receiver has the fourth attempt; its outcome is recorded once the dispatcher has read the answer.
          type Delivery = { attempt: number; outcome: string; response_status: number; event_id: string }
          let forEvent: Array<Delivery> = []
          yield* eventually(
            Effect.map(
              call<{ deliveries: Array<Delivery> }>("GET", `/v1/webhooks/${endpoint.body.id}/deliveries`),
              (page) => {
                forEvent = page.body.deliveries
                  .filter((d) => d.event_id === envelope.id)
                  .sort((a, b) => a.attempt - b.attempt)
                return forEvent.some((d) => d.outcome === "succeeded")
              }
            ),
            10_000
          )
          assert.deepStrictEqual(
            forEvent.map((d) => [d.attempt, d.outcome, d.response_status]),
            [
              [1, "retrying", 500],
              [2, "retrying", 500],
              [3, "retrying", 500],
              [4, "succeeded", 200]
            ]
          )

          // The events list shows the same bytes, and a redelivery starts a new series with the same id.
          const events = yield* call<{ events: Array<{ id: string }> }>(
            "GET",
            `/v1/events?type=deposit_request.ready&deposit_request_id=${created.body.id}`
          )
          assert.deepStrictEqual(
            events.body.events.map((e) => e.id),
            [envelope.id]
          )
          const before = receiver.received.length
          const again = yield* call("POST", `/v1/events/${envelope.id}/redeliver`, {
            webhook_id: endpoint.body.id
          })
          assert.strictEqual(again.status, 202)
          assert.isTrue(
            yield* eventually(
              Effect.sync(() => receiver.received.length > before),
              15_000
            )
          )
          assert.strictEqual(
            receiver.received.at(-1)?.body.toString("utf8"),
            attempts[0]!.body.toString("utf8")
          )

          // A disabled endpoint gets nothing more.
          yield* call("POST", `/v1/webhooks/${endpoint.body.id}/disable`)
          const test = yield* call<{ error: { code: string } }>(
            "POST",
            `/v1/webhooks/${endpoint.body.id}/test`
          )
          assert.strictEqual(test.status, 409)
          assert.strictEqual(test.body.error.code, "invalid_state")
          const count = receiver.received.length
          yield* pause(800)
          assert.strictEqual(receiver.received.length, count)
        })
    )

    it.effect("sends webhook.test to one endpoint only", () =>
      Effect.gen(function* () {
        const { receiver } = yield* Fixture
        failFirst = 0
        receiver.received.length = 0
        const a = yield* call<{ id: string }>("POST", "/v1/webhooks", {
          url: `https://${HOST}:${receiver.port}/a`
        })
        const b = yield* call<{ id: string }>("POST", "/v1/webhooks", {
          url: `https://${HOST}:${receiver.port}/b`
        })
        const queued = yield* call<{ event_id: string }>("POST", `/v1/webhooks/${a.body.id}/test`)
        assert.strictEqual(queued.status, 202)
        assert.isTrue(
          yield* eventually(
            Effect.sync(() =>
              receiver.received.some((r) => r.headers["service-event-id"] === queued.body.event_id)
            ),
            15_000
          )
        )
        yield* pause(500)
        const hits = receiver.received.filter((r) => r.headers["service-event-id"] === queued.body.event_id)
        assert.lengthOf(hits, 1)
        assert.strictEqual(hits[0]?.headers["service-event-type"], "webhook.test")
        yield* call("POST", `/v1/webhooks/${a.body.id}/disable`)
        yield* call("POST", `/v1/webhooks/${b.body.id}/disable`)
      })
    )

    it.scoped(
      "never follows a redirect (here to a loopback address): the attempt is logged as redirect_refused",
      () =>
        Effect.gen(function* () {
          const redirector = yield* scopedReceiver(tls, () => 302)
          const endpoint = yield* call<{ id: string }>("POST", "/v1/webhooks", {
            url: `https://${HOST}:${redirector.port}/hooks`
          })
          const queued = yield* call<{ event_id: string }>("POST", `/v1/webhooks/${endpoint.body.id}/test`)
          assert.strictEqual(queued.status, 202)
          type Delivery = {
            event_id: string
            outcome: string
            response_status: number | null
            error_kind: string | null
          }
          let logged: Array<Delivery> = []
          yield* eventually(
            Effect.map(
              call<{ deliveries: Array<Delivery> }>("GET", `/v1/webhooks/${endpoint.body.id}/deliveries`),
              (page) => {
                logged = page.body.deliveries.filter((d) => d.event_id === queued.body.event_id)
                return logged.length > 0
              }
            ),
            15_000
          )
          assert.deepInclude(logged[0], { outcome: "retrying", error_kind: "redirect_refused" })
          // Only the delivery itself (and its retries) reached the redirector: nothing went where it pointed.
          assert.isAtLeast(redirector.received.length, 1)
          for (const r of redirector.received)
            assert.strictEqual(r.headers["service-event-id"], queued.body.event_id)
          yield* call("POST", `/v1/webhooks/${endpoint.body.id}/disable`)
        })
    )

    it.scoped("fails a delivery for good after 12 attempts", () =>
      Effect.gen(function* () {
        // A service of its own whose schedule starts at 2 ms (2 ms … 2 s, ~4 s in all): the gaps are the stream's
        // redelivery delays, so the test waits for them rather than moving due times in the database.
        const fast = yield* scopedService({
          webhookNetwork: localReceiverNetwork(HOST, tls.ca),
          config: { webhookFirstRetryMs: 2, rateLimitCapacity: 10_000 }
        })
        const client = yield* scopedPgClient(fast.databaseUrl)
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            failFirst = 1_000_000
          }),
          () =>
            Effect.sync(() => {
              failFirst = 0
            })
        )
        const { receiver } = yield* Fixture
        const fastApi = yield* newMerchantClient(fast)
        const endpoint = yield* callWith<{ id: string }>(fastApi, "POST", "/v1/webhooks", {
          url: `https://${HOST}:${receiver.port}/dead`
        })
        const queued = yield* callWith<{ event_id: string }>(
          fastApi,
          "POST",
          `/v1/webhooks/${endpoint.body.id}/test`
        )
        const eventUuid = queued.body.event_id.slice(4)
        const state = Effect.promise(async () => {
          const rows = await client.query<{ state: string; attempts: number }>(
            "select state, attempts from webhook_jobs where event_id = $1",
            [eventUuid]
          )
          return rows.rows[0]
        })
        yield* eventually(
          Effect.map(state, (s) => s?.state === "failed"),
          30_000,
          100
        )
        assert.deepStrictEqual(yield* state, { state: "failed", attempts: 12 })
        const log = yield* callWith<{
          deliveries: Array<{ outcome: string; next_attempt_at: string | null }>
        }>(fastApi, "GET", `/v1/webhooks/${endpoint.body.id}/deliveries?limit=100`)
        assert.lengthOf(log.body.deliveries, 12)
        assert.deepInclude(log.body.deliveries[0], { outcome: "failed", next_attempt_at: null })
        assert.isTrue(log.body.deliveries.slice(1).every((d) => d.outcome === "retrying"))
        // Nothing is attempted after the last: the message was acked, not left to come back.
        yield* pause(1_500)
        assert.strictEqual((yield* state)?.attempts, 12)
      })
    )
  })
})
