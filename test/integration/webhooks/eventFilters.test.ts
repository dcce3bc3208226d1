import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { MerchantClient } from "../../support/Api"
import { eventually, pause } from "../../support/eventually"
import { makeCertificates } from "../../support/HttpsReceiver"
import { WebhookFixture, scopedPgClient } from "../../support/scopedResources"

// Event-type filters per endpoint and the attempts read back as they went over the wire
// (infra/decisions/0086-webhook-event-filters-and-bodies.md).

const HOST = "filters.example.test"
const tls = makeCertificates(HOST)

/** Longer than the 4096 characters an attempt keeps, with a multi-byte character inside the kept part. */
const LONG_ANSWER = `é${"x".repeat(5_000)}`

const Fixture = WebhookFixture
const FixtureLive = WebhookFixture.layer({
  host: HOST,
  tls,
  firstRetryMs: 60_000,
  // `/long` answers more than an attempt keeps; the others `ok`.
  answer: (url) => (url.startsWith("/long") ? LONG_ANSWER : undefined)
})

type Endpoint = { id: string; url: string; enabled_events: Array<string>; disabled_at: string | null }
type Refusal = { error: { code: string; param?: string; message: string } }
type Detail = {
  id: string
  event_id: string
  event_type: string
  outcome: string
  response_status: number | null
  request: { headers: Record<string, string> | null; body: string }
  response: { status: number; body: string | null; body_truncated: boolean } | null
}

const callWith = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))
const call = <T>(...args: Parameters<MerchantClient["call"]>) =>
  Effect.flatMap(Fixture, ({ api }) => callWith<T>(api, ...args))

const register = (path: string, enabled_events?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { receiver } = yield* Fixture
    const created = yield* call<Endpoint>("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}${path}`,
      ...(enabled_events === undefined ? {} : { enabled_events })
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body
  })

/**
 * Lifecycle events of the endpoint's account written as an emitter writes them (the event and its outbox row in one
 * transaction), so the relay fans them out to the endpoints whose filter takes them.
 */
const emit = (endpointId: string, types: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { service } = yield* Fixture
    const pg = yield* scopedPgClient(service.databaseUrl)
    const ids: Array<string> = []
    yield* Effect.promise(async () => {
      const account = await pg.query<{ account_id: string }>(
        "select account_id from webhook_endpoints where id = $1",
        [endpointId.slice(3)]
      )
      await pg.query("begin")
      for (const type of types) {
        const id = randomUUID()
        ids.push(`evt_${id}`)
        const body = JSON.stringify({
          id: `evt_${id}`,
          type,
          occurred_at: new Date().toISOString().slice(0, 19) + "Z",
          data: {}
        })
        await pg.query(
          `insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
           values ($1, $2, null, $3, $5, $4, now())`,
          [id, account.rows[0]!.account_id, type, body, id]
        )
        await pg.query(
          "insert into outbox (topic, payload, created_at) values ('lifecycle', $1::jsonb, now())",
          [JSON.stringify({ event_id: id })]
        )
      }
      await pg.query("commit")
    })
    return ids
  }).pipe(Effect.scoped)

/** The event types (and ids) the receiver got on one path among `eventIds`. */
const receivedOn = (path: string, eventIds: ReadonlyArray<string>) =>
  Effect.map(Fixture, ({ receiver }) =>
    receiver.received
      .filter((r) => r.url === path && eventIds.includes(String(r.headers["service-event-id"])))
      .map((r) => String(r.headers["service-event-type"]))
      .sort()
  )

/** Waits until `everyPath` got every one of `eventIds`, then long enough for anything more to arrive too. */
const settle = (everyPath: string, eventIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    assert.isTrue(
      yield* eventually(
        Effect.map(receivedOn(everyPath, eventIds), (got) => got.length >= eventIds.length),
        15_000
      )
    )
    yield* pause(1_000)
  })

const deliveriesOf = (endpoint: Endpoint) =>
  Effect.map(
    call<{ deliveries: Array<{ id: string; event_id: string }> }>(
      "GET",
      `/v1/webhooks/${endpoint.id}/deliveries`
    ),
    (r) => r.body.deliveries
  )

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("event-type filters", () => {
    it.effect("an endpoint subscribed to one type gets only that type; a * endpoint gets every type", () =>
      Effect.gen(function* () {
        const everything = yield* register("/all")
        assert.deepStrictEqual(everything.enabled_events, ["*"])
        const settledOnly = yield* register("/settled", ["deposit_request.settled"])
        assert.deepStrictEqual(settledOnly.enabled_events, ["deposit_request.settled"])
        const read = yield* call<Endpoint>("GET", `/v1/webhooks/${settledOnly.id}`)
        assert.deepStrictEqual(read.body.enabled_events, ["deposit_request.settled"])
        const listed = yield* call<{ webhooks: Array<Endpoint> }>("GET", "/v1/webhooks")
        assert.deepStrictEqual(listed.body.webhooks.find((w) => w.id === settledOnly.id)?.enabled_events, [
          "deposit_request.settled"
        ])

        const events = yield* emit(everything.id, [
          "deposit_request.ready",
          "deposit_request.settled",
          "deposit_request.expired"
        ])
        yield* settle("/all", events)
        assert.deepStrictEqual(yield* receivedOn("/all", events), [
          "deposit_request.expired",
          "deposit_request.ready",
          "deposit_request.settled"
        ])
        assert.deepStrictEqual(yield* receivedOn("/settled", events), ["deposit_request.settled"])
        // No delivery at all for the types it does not take: no attempt in its log, no job behind it.
        const logged = (yield* deliveriesOf(settledOnly)).filter((d) => events.includes(d.event_id))
        assert.deepStrictEqual(
          logged.map((d) => d.event_id),
          [events[1]]
        )
        const { service } = yield* Fixture
        const pg = yield* scopedPgClient(service.databaseUrl)
        const jobs = yield* Effect.promise(() =>
          pg.query("select event_id from webhook_jobs where endpoint_id = $1", [settledOnly.id.slice(3)])
        )
        assert.deepStrictEqual(
          jobs.rows.map((r) => `evt_${r.event_id}`),
          [events[1]]
        )

        // A redelivery names the endpoint: it is sent even of a type the endpoint does not take.
        const redelivered = yield* call("POST", `/v1/events/${events[0]}/redeliver`, {
          webhook_id: settledOnly.id
        })
        assert.strictEqual(redelivered.status, 202)
        assert.isTrue(
          yield* eventually(
            Effect.map(receivedOn("/settled", [events[0]!]), (got) => got.length === 1),
            15_000
          )
        )
      }).pipe(Effect.scoped)
    )

    it.effect("PATCH changes the filter for the events that follow; null goes back to every type", () =>
      Effect.gen(function* () {
        const everything = yield* register("/all")
        const changing = yield* register("/changing", ["deposit_request.settled"])
        const patched = yield* call<Endpoint>("PATCH", `/v1/webhooks/${changing.id}`, {
          enabled_events: ["deposit_request.ready", "deposit_request.ready"]
        })
        assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
        assert.deepStrictEqual(patched.body.enabled_events, ["deposit_request.ready"])
        assert.strictEqual(patched.body.url, changing.url)
        const first = yield* emit(everything.id, ["deposit_request.ready", "deposit_request.settled"])
        yield* settle("/all", first)
        assert.deepStrictEqual(yield* receivedOn("/changing", first), ["deposit_request.ready"])

        // An empty body changes nothing; null clears the filter to every type.
        const unchanged = yield* call<Endpoint>("PATCH", `/v1/webhooks/${changing.id}`, {})
        assert.deepStrictEqual(unchanged.body.enabled_events, ["deposit_request.ready"])
        const cleared = yield* call<Endpoint>("PATCH", `/v1/webhooks/${changing.id}`, {
          enabled_events: null
        })
        assert.deepStrictEqual(cleared.body.enabled_events, ["*"])
        const second = yield* emit(everything.id, ["deposit_request.ready", "deposit_request.settled"])
        yield* settle("/all", second)
        assert.deepStrictEqual(yield* receivedOn("/changing", second), [
          "deposit_request.ready",
          "deposit_request.settled"
        ])

        const { service } = yield* Fixture
        const pg = yield* scopedPgClient(service.databaseUrl)
        const audited = yield* Effect.promise(() =>
          pg.query(
            "select target_id from audit_log where action = 'webhook_endpoint.updated' and target_id = $1",
            [changing.id]
          )
        )
        assert.isAtLeast(audited.rows.length, 1)
      }).pipe(Effect.scoped)
    )

    it.effect(
      "unknown or empty filters are 400 naming the field and change nothing; another account's is 404",
      () =>
        Effect.gen(function* () {
          const { receiver, other, service } = yield* Fixture
          const endpoint = yield* register("/kept", ["deposit_request.settled"])
          for (const body of [
            { enabled_events: ["deposit_request.nope"] },
            { enabled_events: [] },
            { enabled_events: ["webhook.test"] },
            { enabled_events: ["*", "deposit_request.ready"] },
            { enabled_events: "*" },
            { enabled_events: ["deposit_request.ready"], url: "https://elsewhere.example/x" }
          ]) {
            const refused = yield* call<Refusal>("PATCH", `/v1/webhooks/${endpoint.id}`, body)
            assert.strictEqual(refused.status, 400, JSON.stringify(body))
            assert.strictEqual(refused.body.error.code, "invalid_request")
            const named = "url" in body ? "url" : "enabled_events"
            assert.isTrue(refused.body.error.param?.startsWith(named), JSON.stringify(refused.body))
          }
          const read = yield* call<Endpoint>("GET", `/v1/webhooks/${endpoint.id}`)
          assert.deepStrictEqual(read.body.enabled_events, ["deposit_request.settled"])

          const pg = yield* scopedPgClient(service.databaseUrl)
          const count = () =>
            Effect.promise(() =>
              pg.query<{ n: string }>("select count(*) as n from webhook_endpoints where url like $1", [
                `%/refused-create`
              ])
            ).pipe(Effect.map((r) => Number(r.rows[0]!.n)))
          for (const enabled_events of [[], ["nope"], ["*", "deposit_request.ready"]]) {
            const refused = yield* call<Refusal>("POST", "/v1/webhooks", {
              url: `https://${HOST}:${receiver.port}/refused-create`,
              enabled_events
            })
            assert.strictEqual(refused.status, 400, JSON.stringify(enabled_events))
            assert.isTrue(
              refused.body.error.param?.startsWith("enabled_events"),
              JSON.stringify(refused.body)
            )
          }
          assert.strictEqual(yield* count(), 0)

          const foreign = yield* callWith<Refusal>(other, "PATCH", `/v1/webhooks/${endpoint.id}`, {
            enabled_events: ["*"]
          })
          assert.strictEqual(foreign.status, 404)
          assert.strictEqual(foreign.body.error.code, "webhook_not_found")
          assert.deepStrictEqual(
            (yield* call<Endpoint>("GET", `/v1/webhooks/${endpoint.id}`)).body.enabled_events,
            ["deposit_request.settled"]
          )

          yield* call("POST", `/v1/webhooks/${endpoint.id}/disable`)
          const disabled = yield* call<Refusal>("PATCH", `/v1/webhooks/${endpoint.id}`, {
            enabled_events: ["*"]
          })
          assert.strictEqual(disabled.status, 409)
          assert.strictEqual(disabled.body.error.code, "invalid_state")
        }).pipe(Effect.scoped)
    )
  })

  describe("delivery bodies", () => {
    /** A test event to the endpoint, and the one attempt it made once it is in the log. */
    const testAttempt = (endpoint: Endpoint) =>
      Effect.gen(function* () {
        const sent = yield* call<{ event_id: string }>("POST", `/v1/webhooks/${endpoint.id}/test`)
        assert.strictEqual(sent.status, 202)
        let found: { id: string } | undefined
        assert.isTrue(
          yield* eventually(
            Effect.map(deliveriesOf(endpoint), (ds) => {
              found = ds.find((d) => d.event_id === sent.body.event_id)
              return found !== undefined
            }),
            15_000
          )
        )
        const detail = yield* call<Detail>("GET", `/v1/webhooks/${endpoint.id}/deliveries/${found!.id}`)
        assert.strictEqual(detail.status, 200, JSON.stringify(detail.body))
        return { eventId: sent.body.event_id, detail: detail.body }
      })

    it.effect("an attempt reads back the bytes and headers the receiver got, and the answer it gave", () =>
      Effect.gen(function* () {
        const { receiver } = yield* Fixture
        const endpoint = yield* register("/short")
        const { eventId, detail } = yield* testAttempt(endpoint)
        const got = receiver.received.filter((r) => r.headers["service-event-id"] === eventId)
        assert.strictEqual(got.length, 1)
        assert.strictEqual(detail.request.body, got[0]!.body.toString("utf8"))
        assert.strictEqual(detail.event_type, "webhook.test")
        const headers = detail.request.headers!
        for (const name of ["service-signature", "service-event-id", "service-event-type", "content-type"]) {
          assert.strictEqual(headers[name], got[0]!.headers[name], name)
        }
        assert.deepStrictEqual(detail.response, { status: 200, body: "ok", body_truncated: false })
        assert.strictEqual(detail.outcome, "succeeded")
        // The event itself: the body is the event's JSON, as GET /v1/events/{id} answers it.
        const event = yield* call<{ id: string; type: string }>("GET", `/v1/events/${eventId}`)
        assert.strictEqual(event.status, 200)
        assert.deepStrictEqual(event.body, JSON.parse(detail.request.body))
        assert.strictEqual(event.body.id, eventId)
      })
    )

    it.effect("a long answer is kept to its first 4096 characters and flagged truncated", () =>
      Effect.gen(function* () {
        const endpoint = yield* register("/long")
        const { detail } = yield* testAttempt(endpoint)
        assert.strictEqual(detail.response?.status, 200)
        assert.strictEqual(detail.response?.body, LONG_ANSWER.slice(0, 4096))
        assert.strictEqual(detail.response?.body?.length, 4096)
        assert.isTrue(detail.response?.body_truncated)
      })
    )

    it.effect("another account's attempt, or one under another endpoint, is 404", () =>
      Effect.gen(function* () {
        const { other } = yield* Fixture
        const endpoint = yield* register("/mine")
        const elsewhere = yield* register("/elsewhere")
        const { detail } = yield* testAttempt(endpoint)
        const foreign = yield* callWith<Refusal>(
          other,
          "GET",
          `/v1/webhooks/${endpoint.id}/deliveries/${detail.id}`
        )
        assert.strictEqual(foreign.status, 404)
        assert.strictEqual(foreign.body.error.code, "webhook_not_found")
        const foreignEvent = yield* callWith<Refusal>(other, "GET", `/v1/events/${detail.event_id}`)
        assert.strictEqual(foreignEvent.status, 404)
        assert.strictEqual(foreignEvent.body.error.code, "event_not_found")
        const misplaced = yield* call<Refusal>("GET", `/v1/webhooks/${elsewhere.id}/deliveries/${detail.id}`)
        assert.strictEqual(misplaced.status, 404)
        assert.strictEqual(misplaced.body.error.code, "webhook_delivery_not_found")
        const malformed = yield* call<Refusal>("GET", `/v1/webhooks/${endpoint.id}/deliveries/whd_nope`)
        assert.strictEqual(malformed.status, 404)
      })
    )
  })
})
