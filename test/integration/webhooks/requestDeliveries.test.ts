import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ActorHost } from "../../../services/actors/ActorHost"
import type { MerchantClient } from "../../support/Api"
import { eventually } from "../../support/eventually"
import { makeCertificates } from "../../support/HttpsReceiver"
import type { RunningService } from "../../support/Service"
import { WebhookFixture, onService } from "../../support/scopedResources"

const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

/** How many of the receiver's first requests it answers 500 (a test sets it before it sends). */
let failFirst = 0

const Fixture = WebhookFixture
const FixtureLive = WebhookFixture.layer({
  host: HOST,
  tls,
  firstRetryMs: 200,
  respond: (n) => (n <= failFirst ? 500 : 200)
})

interface Delivery {
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly outcome: string
  readonly response_status: number | null
  readonly error_kind: string | null
  readonly duration_ms: number
}
interface Page {
  readonly deliveries: ReadonlyArray<Delivery>
  readonly next_cursor: string | null
}

const callOn = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))

/** A request of `api`'s account made ready (its wallet attested), which emits `deposit_request.ready`. */
const readyRequest = (service: RunningService, api: MerchantClient, key: string) =>
  Effect.gen(function* () {
    const refs = yield* Effect.promise(() => api.setup())
    const created = yield* callOn<{ id: string }>(
      api,
      "POST",
      "/v1/deposit-requests",
      { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": key }
    )
    const uuid = created.body.id.slice(3)
    yield* onService(
      service,
      Effect.flatMap(ActorHost, (h) =>
        h.apply(uuid, `attest-${key}`, {
          type: "payer.wallet_attested",
          at: new Date().toISOString(),
          wallet: "0x1111111111111111111111111111111111111111",
          address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
        })
      )
    )
    return created.body.id
  })

layer(FixtureLive, { timeout: 120_000 })((it) => {
  it.effect(
    "lists every delivery attempt of one request's events across the account's endpoints, newest first, paged",
    () =>
      Effect.gen(function* () {
        const { receiver, service, api, other } = yield* Fixture
        // Two endpoints of the account: each event goes to both; the first two attempts fail (then retried).
        failFirst = 2
        receiver.received.length = 0
        const first = yield* callOn<{ id: string }>(api, "POST", "/v1/webhooks", {
          url: `https://${HOST}:${receiver.port}/a`
        })
        const second = yield* callOn<{ id: string }>(api, "POST", "/v1/webhooks", {
          url: `https://${HOST}:${receiver.port}/b`
        })
        const id = yield* readyRequest(service, api, `rd-${Date.now()}`)
        type Series = { deliveries: ReadonlyArray<Delivery> }
        const all = () => callOn<Page & Series>(api, "GET", `/v1/deposit-requests/${id}/deliveries?limit=100`)
        // Both endpoints end with a success: four attempts at least (two failures, two successes).
        assert.isTrue(
          yield* eventually(
            Effect.map(
              all(),
              (page) => page.body.deliveries.filter((d) => d.outcome === "succeeded").length === 2
            ),
            20_000
          )
        )
        // A decoy: another request of the same account, delivered to the same endpoints.
        const decoy = yield* readyRequest(service, api, `rd-decoy-${Date.now()}`)
        assert.isTrue(
          yield* eventually(
            Effect.map(
              callOn<Page>(api, "GET", `/v1/deposit-requests/${decoy}/deliveries`),
              (page) => page.body.deliveries.filter((d) => d.outcome === "succeeded").length === 2
            ),
            20_000
          )
        )
        const page = yield* all()
        assert.strictEqual(page.status, 200)
        const rows = page.body.deliveries
        assert.isAtLeast(rows.length, 4)
        assert.isNull(page.body.next_cursor)
        // Only this request's event, to both endpoints, each row naming its endpoint and event.
        const events = yield* callOn<{ events: ReadonlyArray<{ id: string; type: string }> }>(
          api,
          "GET",
          `/v1/events?deposit_request_id=${id}`
        )
        const eventIds = new Set(events.body.events.map((e) => e.id))
        assert.isAbove(eventIds.size, 0)
        for (const d of rows) {
          assert.isTrue(eventIds.has(d.event_id), `${d.event_id} is not an event of ${id}`)
          assert.strictEqual(d.event_type, "deposit_request.ready")
          assert.include([first.body.id, second.body.id], d.webhook_id)
          assert.match(d.id, /^whd_/)
          assert.isNumber(d.duration_ms)
        }
        assert.deepStrictEqual(
          new Set(rows.map((d) => d.webhook_id)),
          new Set([first.body.id, second.body.id])
        )
        const failed = rows.filter((d) => d.outcome !== "succeeded")
        assert.strictEqual(failed.length, 2)
        for (const d of failed) {
          assert.strictEqual(d.response_status, 500)
          assert.strictEqual(d.error_kind, "non_2xx")
        }
        // Newest first: ids (time-ordered) descending.
        const ids = rows.map((d) => d.id)
        assert.deepStrictEqual(ids, [...ids].sort().reverse())

        // The cursor walks the same rows one at a time.
        const walked: Array<string> = []
        let cursor: string | null = null
        do {
          const next: { body: Page } = yield* callOn<Page>(
            api,
            "GET",
            `/v1/deposit-requests/${id}/deliveries?limit=1${cursor === null ? "" : `&starting_after=${cursor}`}`
          )
          walked.push(...next.body.deliveries.map((d) => d.id))
          cursor = next.body.next_cursor
        } while (cursor !== null && walked.length <= ids.length)
        assert.deepStrictEqual(walked, ids)

        // Another account cannot read them, and its own request's list stays its own.
        const foreign = yield* callOn<{ error: { code: string } }>(
          other,
          "GET",
          `/v1/deposit-requests/${id}/deliveries`
        )
        assert.strictEqual(foreign.status, 404)
        assert.strictEqual(foreign.body.error.code, "deposit_request_not_found")
        const wrongCursor = yield* callOn<{ error: { code: string; param: string } }>(
          api,
          "GET",
          `/v1/deposit-requests/${id}/deliveries?starting_after=${id}`
        )
        assert.strictEqual(wrongCursor.status, 400)
        assert.strictEqual(wrongCursor.body.error.param, "starting_after")

        // The endpoint's own log, by outcome.
        for (const endpoint of [first.body.id, second.body.id]) {
          const log = (outcome: string) =>
            callOn<Page>(api, "GET", `/v1/webhooks/${endpoint}/deliveries?outcome=${outcome}&limit=100`)
          const ok = yield* log("succeeded")
          const bad = yield* log("failed")
          assert.isAbove(ok.body.deliveries.length, 0)
          assert.isTrue(ok.body.deliveries.every((d) => d.outcome === "succeeded"))
          assert.isTrue(bad.body.deliveries.every((d) => d.outcome !== "succeeded"))
          const everything = yield* callOn<Page>(api, "GET", `/v1/webhooks/${endpoint}/deliveries?limit=100`)
          assert.strictEqual(
            ok.body.deliveries.length + bad.body.deliveries.length,
            everything.body.deliveries.length
          )
        }
        const failedTotal = (yield* callOn<Page>(
          api,
          "GET",
          `/v1/webhooks/${first.body.id}/deliveries?outcome=failed`
        )).body.deliveries.length
        const failedTotal2 = (yield* callOn<Page>(
          api,
          "GET",
          `/v1/webhooks/${second.body.id}/deliveries?outcome=failed`
        )).body.deliveries.length
        assert.strictEqual(failedTotal + failedTotal2, 2)
        const badOutcome = yield* callOn<{ error: { code: string; param: string } }>(
          api,
          "GET",
          `/v1/webhooks/${first.body.id}/deliveries?outcome=retrying`
        )
        assert.strictEqual(badOutcome.status, 400)
        assert.strictEqual(badOutcome.body.error.param, "outcome")
      })
  )
})
