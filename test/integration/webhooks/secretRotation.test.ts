import { createHmac, timingSafeEqual } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { MerchantClient } from "../../support/Api"
import { eventually, pause } from "../../support/eventually"
import { makeCertificates } from "../../support/HttpsReceiver"
import { WebhookFixture, scopedPgClient } from "../../support/scopedResources"

// Rolling an endpoint's secret (infra/decisions/0083-webhook-secret-rotation.md): one endpoint, every delivery
// signed with each live secret until the previous one expires, at most two secrets.

const HOST = "rotate.example.test"
const tls = makeCertificates(HOST)

/** The spec's verification, written independently of the service's signer, accepting any of several `sha256=`. */
const verifies = (header: string, secret: string, raw: Buffer) => {
  const parts = header.split(",")
  if (parts[0] !== "v1") return false
  const t = Number(parts.find((p) => p.startsWith("t="))?.slice(2))
  if (!Number.isFinite(t) || Math.abs(Math.floor(Date.now() / 1000) - t) > 300) return false
  const expected = createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`v1.${t}.`), raw]))
    .digest()
  return parts
    .filter((p) => p.startsWith("sha256="))
    .map((p) => Buffer.from(p.slice(7), "hex"))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected))
}

const Fixture = WebhookFixture
const FixtureLive = WebhookFixture.layer({ host: HOST, tls, firstRetryMs: 200 })

type Rotated = { id: string; url: string; secret: string; previous_secret_expires_at: string | null }

const callWith = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))
const call = <T>(...args: Parameters<MerchantClient["call"]>) =>
  Effect.flatMap(Fixture, ({ api }) => callWith<T>(api, ...args))

const register = Effect.gen(function* () {
  const { receiver } = yield* Fixture
  const created = yield* call<{ id: string; secret: string }>("POST", "/v1/webhooks", {
    url: `https://${HOST}:${receiver.port}/hooks`
  })
  assert.strictEqual(created.status, 201)
  return created.body
})

const rotate = (id: string, body?: unknown) =>
  Effect.gen(function* () {
    const rotated = yield* call<Rotated>("POST", `/v1/webhooks/${id}/rotate-secret`, body)
    assert.strictEqual(rotated.status, 200, JSON.stringify(rotated.body))
    assert.match(rotated.body.secret, /^whsec_/)
    return rotated.body
  })

/** A test event to the endpoint; answers every request the receiver got for it, once its delivery settled. */
const deliveredTest = (id: string) =>
  Effect.gen(function* () {
    const { receiver } = yield* Fixture
    const sent = yield* call<{ event_id: string }>("POST", `/v1/webhooks/${id}/test`)
    assert.strictEqual(sent.status, 202)
    const ofEvent = () =>
      receiver.received.filter((r) => r.headers["service-event-id"] === sent.body.event_id)
    assert.isTrue(
      yield* eventually(
        Effect.sync(() => ofEvent().length > 0),
        15_000
      )
    )
    // Long enough for a duplicate (a second endpoint, a retry) to arrive as well.
    yield* pause(500)
    return ofEvent()
  })

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("webhook secret rotation", () => {
    it.effect("one endpoint signs with both secrets during the grace, and with the new one only after", () =>
      Effect.gen(function* () {
        const { service } = yield* Fixture
        const endpoint = yield* register
        const before = Date.now()
        // No body at all: the grace is 24 hours.
        const rotated = yield* rotate(endpoint.id)
        assert.strictEqual(rotated.id, endpoint.id)
        assert.notStrictEqual(rotated.secret, endpoint.secret)
        const graceEnds = Date.parse(rotated.previous_secret_expires_at ?? "")
        assert.isAtLeast(graceEnds, before + 24 * 3_600_000 - 1_000)
        assert.isAtMost(graceEnds, Date.now() + 24 * 3_600_000 + 1_000)
        const list = yield* call<{
          webhooks: Array<{ id: string; url: string; disabled_at: string | null }>
        }>("GET", "/v1/webhooks")
        assert.deepStrictEqual(
          list.body.webhooks.filter((w) => w.id === endpoint.id || w.url === rotated.url).map((w) => w.id),
          [endpoint.id]
        )
        const read = yield* call<Record<string, unknown>>("GET", `/v1/webhooks/${endpoint.id}`)
        assert.notProperty(read.body, "secret")

        const during = yield* deliveredTest(endpoint.id)
        assert.strictEqual(during.length, 1)
        const header = String(during[0]!.headers["service-signature"])
        assert.strictEqual(header.split(",").filter((p) => p.startsWith("sha256=")).length, 2)
        assert.isTrue(verifies(header, endpoint.secret, during[0]!.body))
        assert.isTrue(verifies(header, rotated.secret, during[0]!.body))
        assert.isFalse(verifies(header, "whsec_someone_else", during[0]!.body))

        // The grace ends (set where the service reads it: the dispatcher compares it with its clock at the claim).
        const pg = yield* scopedPgClient(service.databaseUrl)
        yield* Effect.promise(() =>
          pg.query(
            "update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = $1",
            [endpoint.id.slice(3)]
          )
        )
        const after = yield* deliveredTest(endpoint.id)
        assert.strictEqual(after.length, 1)
        const afterHeader = String(after[0]!.headers["service-signature"])
        assert.strictEqual(afterHeader.split(",").filter((p) => p.startsWith("sha256=")).length, 1)
        assert.isTrue(verifies(afterHeader, rotated.secret, after[0]!.body))
        assert.isFalse(verifies(afterHeader, endpoint.secret, after[0]!.body))
      }).pipe(Effect.scoped)
    )

    it.effect("rotating again ends the oldest secret at once: never more than two sign", () =>
      Effect.gen(function* () {
        const first = yield* register
        const second = yield* rotate(first.id, { expires_in_hours: 48 })
        const third = yield* rotate(first.id, {})
        assert.isNotNull(third.previous_secret_expires_at)
        const [delivery, ...more] = yield* deliveredTest(first.id)
        assert.deepStrictEqual(more, [])
        const header = String(delivery!.headers["service-signature"])
        assert.strictEqual(header.split(",").filter((p) => p.startsWith("sha256=")).length, 2)
        assert.isTrue(verifies(header, third.secret, delivery!.body))
        assert.isTrue(verifies(header, second.secret, delivery!.body))
        assert.isFalse(verifies(header, first.secret, delivery!.body))

        // A grace of 0 ends the previous secret now.
        const fourth = yield* rotate(first.id, { expires_in_hours: 0 })
        assert.isNull(fourth.previous_secret_expires_at)
        const [only] = yield* deliveredTest(first.id)
        const onlyHeader = String(only!.headers["service-signature"])
        assert.strictEqual(onlyHeader.split(",").filter((p) => p.startsWith("sha256=")).length, 1)
        assert.isTrue(verifies(onlyHeader, fourth.secret, only!.body))
        assert.isFalse(verifies(onlyHeader, third.secret, only!.body))
      })
    )

    it.effect(
      "is 404 on another account's endpoint, 409 once disabled, 400 outside 0..168, and is audited",
      () =>
        Effect.gen(function* () {
          const { other, service } = yield* Fixture
          const endpoint = yield* register
          const foreign = yield* callWith<{ error: { code: string } }>(
            other,
            "POST",
            `/v1/webhooks/${endpoint.id}/rotate-secret`,
            {}
          )
          assert.strictEqual(foreign.status, 404)
          assert.strictEqual(foreign.body.error.code, "webhook_not_found")
          for (const body of [
            { expires_in_hours: 169 },
            { expires_in_hours: -1 },
            { expires_in_hours: 1, x: 1 }
          ]) {
            const refused = yield* call("POST", `/v1/webhooks/${endpoint.id}/rotate-secret`, body)
            assert.strictEqual(refused.status, 400, JSON.stringify(body))
          }
          yield* rotate(endpoint.id, { expires_in_hours: 1 })
          const pg = yield* scopedPgClient(service.databaseUrl)
          const audited = yield* Effect.promise(() =>
            pg.query<{ target_id: string }>(
              "select target_id from audit_log where action = 'webhook_endpoint.secret_rotated' and target_id = $1",
              [endpoint.id]
            )
          )
          assert.deepStrictEqual(
            audited.rows.map((r) => r.target_id),
            [endpoint.id]
          )
          yield* call("POST", `/v1/webhooks/${endpoint.id}/disable`)
          const disabled = yield* call("POST", `/v1/webhooks/${endpoint.id}/rotate-secret`, {})
          assert.strictEqual(disabled.status, 409)
        }).pipe(Effect.scoped)
    )
  })
})
