import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { english, generateMnemonic } from "viem/accounts"
import pg from "pg"
import { verify } from "../../../src/client/webhooks"
import { merchantClient, type MerchantClient } from "../../support/Api"
import { eventually } from "../../support/eventually"
import { callApi, readyRequest as readyRequestOf } from "../../support/readyRequest"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"
import { newMerchantClient, scopedService } from "../../support/scopedResources"

// Listeners (`deposits listen`'s temporary endpoints) over HTTP against the whole service: deliveries handed out
// with their exact bytes and signature, the local answer recorded as the attempt (a failure retried with the same
// event id and bytes), the event filter, expiry when no poll comes, removal, isolation between accounts, a real
// endpoint's URL rules unchanged, and a production service refusing them with nothing written.

const TTL_MS = 1_500

class Fixture extends Context.Tag("test/WebhookListenersFixture")<
  Fixture,
  { readonly sandbox: RunningService; readonly production: RunningService }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const sandbox = yield* scopedService({
      config: { webhookFirstRetryMs: 300, webhookListenerTtlMs: TTL_MS, rateLimitCapacity: 10_000 }
    })
    const production = yield* scopedService({
      config: {
        serviceEnv: "production",
        natsUrl: Option.some("nats://127.0.0.1:4222"),
        depositKeyMnemonic: Option.some(Redacted.make(generateMnemonic(english)))
      }
    })
    return { sandbox, production }
  })
)

interface Created {
  readonly id: string
  readonly secret: string
  readonly event_types: ReadonlyArray<string> | null
}
interface Delivery {
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly body: string
  readonly headers: Record<string, string>
}
type ErrorBody = { error: { code: string; message: string } }

const call = callApi

const open = (api: MerchantClient, body: unknown = {}) =>
  Effect.map(call<Created>(api, "POST", "/v1/webhook-listeners", body), (created) => {
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body
  })

const poll = (api: MerchantClient, listener: { id: string }, hold = "") =>
  call<{ deliveries: Array<Delivery> }>(api, "GET", `/v1/webhook-listeners/${listener.id}/deliveries${hold}`)

const answer = (api: MerchantClient, listener: { id: string }, delivery: Delivery, status: number) =>
  call<{ outcome: string; next_attempt_at: string | null }>(
    api,
    "POST",
    `/v1/webhook-listeners/${listener.id}/answers`,
    {
      event_id: delivery.event_id,
      attempt: delivery.attempt,
      status,
      error: null,
      excerpt: status === 200 ? "ok" : "boom",
      duration_ms: 7
    }
  )

const readyRequest = (service: RunningService, api: MerchantClient) =>
  readyRequestOf(service, api, "2.000000", "listeners")

/** Polls (held a second at a time) until a delivery comes. */
const nextDelivery = (api: MerchantClient, listener: { id: string }) =>
  Effect.gen(function* () {
    for (let i = 0; i < 20; i++) {
      const page = yield* poll(api, listener, "?wait_for=change&timeout=1")
      assert.strictEqual(page.status, 200, JSON.stringify(page.body))
      if (page.body.deliveries.length > 0) return page.body.deliveries
    }
    return assert.fail("no delivery came")
  })

const query = (service: RunningService, text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: service.databaseUrl })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.query(text, [...values])),
    (client) => Effect.promise(() => client.end())
  )

layer(FixtureLive, { timeout: 60_000, excludeTestServices: true })((it) => {
  describe("webhook listeners", () => {
    it.effect(
      "a listener gets each event with its exact bytes and signature; a 500 answer is retried, same id and bytes",
      () =>
        Effect.gen(function* () {
          const { sandbox } = yield* Fixture
          const api = yield* newMerchantClient(sandbox)
          const listener = yield* open(api)
          assert.match(listener.id, /^wh_/)
          assert.match(listener.secret, /^whsec_/)
          assert.isNull(listener.event_types)
          // Only settled events: the ready event of the same request never reaches it.
          const filtered = yield* open(api, { event_types: ["deposit_request.settled"] })
          assert.deepStrictEqual(filtered.event_types, ["deposit_request.settled"])

          const requestId = yield* readyRequest(sandbox, api)
          const [first, ...others] = yield* nextDelivery(api, listener)
          assert.deepStrictEqual(others, [])
          assert.strictEqual(first!.event_type, "deposit_request.ready")
          assert.strictEqual(first!.attempt, 1)
          assert.strictEqual(first!.headers["service-event-id"], first!.event_id)
          assert.strictEqual(first!.headers["content-type"], "application/json")
          const event = yield* Effect.promise(() => verify(first!.body, first!.headers, listener.secret))
          assert.strictEqual(event.id, first!.event_id)
          if (event.type === "deposit_request.ready")
            assert.strictEqual(event.data.deposit_request.id, requestId)
          else assert.fail(`not the ready event: ${event.type}`)

          // Handed out, it is the CLI's until answered: another poll does not get it again.
          assert.deepStrictEqual((yield* poll(api, listener)).body.deliveries, [])
          const failed = yield* answer(api, listener, first!, 500)
          assert.strictEqual(failed.status, 200, JSON.stringify(failed.body))
          assert.strictEqual(failed.body.outcome, "retrying")
          assert.isString(failed.body.next_attempt_at)
          // The same attempt reported twice is recorded once.
          const again = yield* answer(api, listener, first!, 500)
          assert.strictEqual(again.status, 409)
          assert.strictEqual((again.body as unknown as ErrorBody).error.code, "invalid_state")

          const [retry] = yield* nextDelivery(api, listener)
          assert.strictEqual(retry!.event_id, first!.event_id)
          assert.strictEqual(retry!.body, first!.body)
          assert.strictEqual(retry!.attempt, 2)
          yield* Effect.promise(() => verify(retry!.body, retry!.headers, listener.secret))
          const succeeded = yield* answer(api, listener, retry!, 200)
          assert.deepStrictEqual(succeeded.body, { outcome: "succeeded", next_attempt_at: null })

          // The delivery log shows both attempts under the request; a listener is no endpoint, so the endpoint's
          // log and its attempts answer 404.
          const byRequest = yield* call<{
            deliveries: Array<{
              id: string
              webhook_id: string
              attempt: number
              outcome: string
              response_status: number
              error_message: string
            }>
          }>(api, "GET", `/v1/deposit-requests/${requestId}/deliveries`)
          const log = byRequest.body.deliveries.filter((d) => d.webhook_id === listener.id)
          assert.deepStrictEqual(
            log.map((d) => [d.attempt, d.outcome, d.response_status]),
            [
              [2, "succeeded", 200],
              [1, "retrying", 500]
            ]
          )
          assert.strictEqual(log[1]!.error_message, "boom")
          for (const [method, path, body] of [
            ["GET", `/v1/webhooks/${listener.id}`],
            ["PATCH", `/v1/webhooks/${listener.id}`, { enabled_events: ["*"] }],
            ["POST", `/v1/webhooks/${listener.id}/disable`],
            ["POST", `/v1/webhooks/${listener.id}/rotate-secret`],
            ["GET", `/v1/webhooks/${listener.id}/deliveries`],
            ["GET", `/v1/webhooks/${listener.id}/deliveries/${log[0]!.id}`]
          ] as const) {
            const refused = yield* call(api, method, path, body)
            assert.strictEqual(refused.status, 404, path)
            assert.strictEqual((refused.body as unknown as ErrorBody).error.code, "webhook_not_found", path)
          }
          assert.deepStrictEqual((yield* poll(api, filtered)).body.deliveries, [])

          // A listener is not one of the account's endpoints: not listed, no test event.
          const endpoints = yield* call<{ webhooks: Array<{ id: string }> }>(api, "GET", "/v1/webhooks")
          assert.deepStrictEqual(endpoints.body.webhooks, [])
          assert.strictEqual((yield* call(api, "POST", `/v1/webhooks/${listener.id}/test`)).status, 404)

          // Removed (the CLI's exit): its polls are 404, its log stays.
          assert.strictEqual((yield* call(api, "DELETE", `/v1/webhook-listeners/${listener.id}`)).status, 204)
          const gone = yield* poll(api, listener)
          assert.strictEqual(gone.status, 404)
          assert.strictEqual((gone.body as unknown as ErrorBody).error.code, "webhook_not_found")
          assert.strictEqual((yield* call(api, "GET", `/v1/webhooks/${listener.id}/deliveries`)).status, 404)
        })
    )

    it.effect(
      "a removed listener reopens with the same secret; a rotated one signs with the new secret only; an event is redelivered to it",
      () =>
        Effect.gen(function* () {
          const { sandbox } = yield* Fixture
          const api = yield* newMerchantClient(sandbox)
          const listener = yield* open(api)
          assert.strictEqual((yield* call(api, "DELETE", `/v1/webhook-listeners/${listener.id}`)).status, 204)
          assert.strictEqual((yield* poll(api, listener)).status, 404)

          // The next run of `deposits listen` opens it again: same id, polls answer, deliveries verify with the
          // secret the first run printed. The answer does not repeat the secret.
          const reopened = yield* call<Record<string, unknown>>(
            api,
            "POST",
            `/v1/webhook-listeners/${listener.id}/reopen`,
            { event_types: ["deposit_request.ready"] }
          )
          assert.strictEqual(reopened.status, 200, JSON.stringify(reopened.body))
          assert.strictEqual(reopened.body.id, listener.id)
          assert.deepStrictEqual(reopened.body.event_types, ["deposit_request.ready"])
          assert.notProperty(reopened.body, "secret")
          yield* readyRequest(sandbox, api)
          const [first] = yield* nextDelivery(api, listener)
          const firstEvent = yield* Effect.promise(() => verify(first!.body, first!.headers, listener.secret))
          assert.strictEqual(firstEvent.id, first!.event_id)
          assert.strictEqual((yield* answer(api, listener, first!, 200)).body.outcome, "succeeded")

          // Rotated: the new secret verifies a redelivery of the same event; the old one no longer does.
          const rotated = yield* call<Created>(
            api,
            "POST",
            `/v1/webhook-listeners/${listener.id}/rotate-secret`
          )
          assert.strictEqual(rotated.status, 200, JSON.stringify(rotated.body))
          assert.strictEqual(rotated.body.id, listener.id)
          assert.match(rotated.body.secret, /^whsec_/)
          assert.notStrictEqual(rotated.body.secret, listener.secret)
          const resent = yield* call(api, "POST", `/v1/events/${first!.event_id}/redeliver`, {
            webhook_id: listener.id
          })
          assert.strictEqual(resent.status, 202, JSON.stringify(resent.body))
          const [again] = yield* nextDelivery(api, listener)
          assert.strictEqual(again!.event_id, first!.event_id)
          assert.strictEqual(again!.body, first!.body)
          const againEvent = yield* Effect.promise(() =>
            verify(again!.body, again!.headers, rotated.body.secret)
          )
          assert.strictEqual(againEvent.id, first!.event_id)
          const stale = yield* Effect.promise(() =>
            verify(again!.body, again!.headers, listener.secret).then(
              () => undefined,
              (e: unknown) => e
            )
          )
          assert.instanceOf(stale, Error)

          // A removed listener is not rotated, and takes no redelivery until it is reopened.
          assert.strictEqual((yield* call(api, "DELETE", `/v1/webhook-listeners/${listener.id}`)).status, 204)
          const closed = yield* call<ErrorBody>(
            api,
            "POST",
            `/v1/webhook-listeners/${listener.id}/rotate-secret`
          )
          assert.strictEqual(closed.status, 404)
          const refused = yield* call<ErrorBody>(api, "POST", `/v1/events/${first!.event_id}/redeliver`, {
            webhook_id: listener.id
          })
          assert.strictEqual(refused.status, 409)
          assert.strictEqual(refused.body.error.code, "invalid_state")
        })
    )

    it.effect("a local server that gave no answer is logged as the CLI saw it (timeout or connection)", () =>
      Effect.gen(function* () {
        const { sandbox } = yield* Fixture
        const api = yield* newMerchantClient(sandbox)
        const listener = yield* open(api)
        const requestId = yield* readyRequest(sandbox, api)
        const [delivery] = yield* nextDelivery(api, listener)
        const reported = yield* call<{ outcome: string }>(
          api,
          "POST",
          `/v1/webhook-listeners/${listener.id}/answers`,
          { event_id: delivery!.event_id, attempt: 1, status: null, error: "timeout", duration_ms: 10_000 }
        )
        assert.strictEqual(reported.body.outcome, "retrying")
        const log = yield* call<{
          deliveries: Array<{ response_status: number | null; error_kind: string; error_message: string }>
        }>(api, "GET", `/v1/deposit-requests/${requestId}/deliveries`)
        assert.deepStrictEqual(
          log.body.deliveries.map((d) => [d.response_status, d.error_kind, d.error_message]),
          [[null, "timeout", "the local URL gave no answer (timeout)"]]
        )
      })
    )

    it.effect("a listener no poll keeps alive expires, and what it had pending is cancelled", () =>
      Effect.gen(function* () {
        const { sandbox } = yield* Fixture
        const api = yield* newMerchantClient(sandbox)
        const listener = yield* open(api)
        const kept = yield* open(api)
        yield* readyRequest(sandbox, api)
        // One listener is polled (and so kept alive) while the other is left alone past the TTL and the sweep.
        const expired = yield* eventually(
          Effect.gen(function* () {
            assert.strictEqual((yield* poll(api, kept)).status, 200)
            const row = yield* query(sandbox, "select disabled_at from webhook_endpoints where id = $1", [
              listener.id.slice(3)
            ])
            return row.rows[0]?.disabled_at !== null
          }),
          15_000,
          200
        )
        assert.isTrue(expired)
        assert.strictEqual((yield* poll(api, listener)).status, 404)
        const rows = yield* query(
          sandbox,
          `select e.disabled_at is not null as disabled, j.state from webhook_endpoints e
           left join webhook_jobs j on j.endpoint_id = e.id where e.id = $1`,
          [listener.id.slice(3)]
        )
        assert.deepStrictEqual(rows.rows, [{ disabled: true, state: "cancelled" }])
        assert.strictEqual((yield* poll(api, kept)).status, 200)
      })
    )

    it.effect("another account's listener is 404 on every route", () =>
      Effect.gen(function* () {
        const { sandbox } = yield* Fixture
        const owner = yield* newMerchantClient(sandbox)
        const stranger = yield* newMerchantClient(sandbox)
        const listener = yield* open(owner)
        const answers = [
          yield* poll(stranger, listener),
          yield* poll(stranger, listener, "?wait_for=change&timeout=1"),
          yield* call(stranger, "POST", `/v1/webhook-listeners/${listener.id}/answers`, {
            event_id: "evt_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b",
            attempt: 1,
            status: 200,
            error: null,
            duration_ms: 1
          }),
          yield* call(stranger, "DELETE", `/v1/webhook-listeners/${listener.id}`),
          yield* call(stranger, "GET", `/v1/webhooks/${listener.id}/deliveries`),
          yield* call(stranger, "POST", `/v1/webhook-listeners/${listener.id}/reopen`, {}),
          yield* call(stranger, "POST", `/v1/webhook-listeners/${listener.id}/rotate-secret`)
        ]
        assert.deepStrictEqual(
          answers.map((a) => [a.status, (a.body as unknown as ErrorBody).error.code]),
          Array(7).fill([404, "webhook_not_found"])
        )
        // Still the owner's, alive.
        assert.strictEqual((yield* poll(owner, listener)).status, 200)
      })
    )

    it.effect("a real endpoint still refuses http://localhost while a listener exists", () =>
      Effect.gen(function* () {
        const { sandbox } = yield* Fixture
        const api = yield* newMerchantClient(sandbox)
        yield* open(api)
        for (const url of [
          "http://localhost:3000/hooks",
          "https://localhost:3000/hooks",
          "https://127.0.0.1/h"
        ]) {
          const refused = yield* call<ErrorBody>(api, "POST", "/v1/webhooks", { url })
          assert.strictEqual(refused.status, 400, url)
          assert.strictEqual(refused.body.error.code, "invalid_request")
        }
      })
    )

    it.effect("a production service refuses a listener with 403 sandbox_only and writes nothing", () =>
      Effect.gen(function* () {
        const { production } = yield* Fixture
        const merchant = yield* Effect.promise(() =>
          createMerchant(production.databaseUrl, { serviceEnv: "production" })
        )
        const api = merchantClient(production, merchant)
        const refused = yield* call<ErrorBody>(api, "POST", "/v1/webhook-listeners", {})
        assert.strictEqual(refused.status, 403)
        assert.strictEqual(refused.body.error.code, "sandbox_only")
        assert.match(refused.body.error.message, /sandbox only/)
        const count = yield* query(production, "select count(*)::int as n from webhook_endpoints")
        assert.deepStrictEqual(count.rows, [{ n: 0 }])
        const polled = yield* call<ErrorBody>(
          api,
          "GET",
          "/v1/webhook-listeners/wh_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b/deliveries"
        )
        assert.strictEqual(polled.status, 403)

        // The CLI, as a merchant would run it against production: it says why and exits 1.
        const cli = yield* Effect.tryPromise(() =>
          promisify(execFile)(
            process.execPath,
            [
              "src/cli/deposits.mjs",
              "listen",
              "--forward-to",
              "http://localhost:3000/hooks",
              "--api",
              production.baseUrl
            ],
            { env: { ...process.env, DEPOSITS_API_KEY: merchant.apiKey } }
          )
        ).pipe(
          Effect.flip,
          Effect.map((e) => e.error as { code: number; stdout: string; stderr: string })
        )
        assert.strictEqual(cli.code, 1)
        assert.match(cli.stderr, /the listener was refused: 403 sandbox_only: .*sandbox only/)
        assert.strictEqual(cli.stdout, "")
        assert.deepStrictEqual(
          (yield* query(production, "select count(*)::int as n from webhook_endpoints")).rows,
          [{ n: 0 }]
        )
      })
    )
  })
})

describe("a held listener poll at shutdown", () => {
  it.live("is answered at once, so it does not hold the service's stop", () =>
    Effect.gen(function* () {
      const service = yield* Effect.promise(() => startService())
      const api = yield* newMerchantClient(service)
      const listener = yield* open(api)
      const held = yield* Effect.fork(poll(api, listener, "?wait_for=change&timeout=30"))
      yield* Effect.sleep("500 millis")
      const started = Date.now()
      yield* Effect.promise(() => service.stop())
      const stopMs = Date.now() - started
      const answered = yield* Fiber.join(held)
      assert.strictEqual(answered.status, 200)
      assert.deepStrictEqual(answered.body.deliveries, [])
      assert.isBelow(stopMs, 5_000)
    })
  )
})
