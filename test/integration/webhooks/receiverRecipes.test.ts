import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import express from "express"
import { getRequestListener } from "@hono/node-server"
import { createServer, type Server } from "node:https"
import type { Server as HttpServer, RequestListener } from "node:http"
import type { Event, WebhookVerificationError } from "../../../src/client/webhooks"
import { expressReceiver } from "../../../src/client/recipes/express"
import { fastifyReceiver } from "../../../src/client/recipes/fastify"
import { honoReceiver } from "../../../src/client/recipes/hono"
import type { MerchantClient } from "../../support/Api"
import { eventually } from "../../support/eventually"
import { callApi, readyRequest as readyRequestOf } from "../../support/readyRequest"
import { localReceiverNetwork, makeCertificates } from "../../support/HttpsReceiver"
import type { RunningService } from "../../support/Service"
import { newMerchantClient, scopedService } from "../../support/scopedResources"

// The receiver recipes as merchants run them (Express 5, Fastify 5, Hono on node), behind TLS, receiving real
// deliveries from the whole service and verifying them with the webhook helper.

const HOST = "recipes.example.test"
const tls = makeCertificates(HOST)

/** One running recipe: the secrets it verifies with (filled in once registered), what it handled and refused. */
interface Receiver {
  readonly port: number
  readonly secrets: Array<string>
  readonly handled: Array<Event>
  readonly refused: Array<WebhookVerificationError>
}

const recipe = (
  start: (
    secrets: Array<string>,
    handle: (event: Event) => void,
    refuse: (error: WebhookVerificationError) => void
  ) => Promise<{ port: number; close: () => Promise<void> }>
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const secrets: Array<string> = []
      const handled: Array<Event> = []
      const refused: Array<WebhookVerificationError> = []
      const running = await start(
        secrets,
        (event) => handled.push(event),
        (error) => refused.push(error)
      )
      return { port: running.port, secrets, handled, refused, close: running.close }
    }),
    (receiver) => Effect.promise(receiver.close)
  )

const listenHttps = (listener: RequestListener) =>
  new Promise<{ port: number; close: () => Promise<void> }>((resolve) => {
    const server: Server = createServer(tls, listener)
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as { port: number }).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    )
  })

class Fixture extends Context.Tag("test/ReceiverRecipesFixture")<
  Fixture,
  {
    readonly service: RunningService
    readonly express: Receiver
    readonly fastify: Receiver
    readonly hono: Receiver
    readonly expressWithJson: Receiver
    readonly rotating: Receiver
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const service = yield* scopedService({
      webhookNetwork: localReceiverNetwork(HOST, tls.ca),
      config: { webhookFirstRetryMs: 60_000, rateLimitCapacity: 10_000 }
    })
    return {
      service,
      express: yield* recipe((secrets, handle, refuse) =>
        listenHttps(expressReceiver(secrets, handle, refuse) as unknown as RequestListener)
      ),
      fastify: yield* recipe(async (secrets, handle, refuse) => {
        const app = fastifyReceiver(secrets, handle, refuse, {
          // Behind TLS as in production; the recipe itself is the same over plain HTTP.
          serverFactory: (handler) => createServer(tls, handler) as unknown as HttpServer
        })
        await app.listen({ port: 0, host: "127.0.0.1" })
        return { port: (app.server.address() as { port: number }).port, close: () => app.close() }
      }),
      hono: yield* recipe((secrets, handle, refuse) =>
        listenHttps(getRequestListener(honoReceiver(secrets, handle, refuse).fetch))
      ),
      // The most common mistake: an app-wide JSON parser in front of the webhook route.
      expressWithJson: yield* recipe((secrets, handle, refuse) => {
        const app = express()
        app.use(express.json())
        app.use(expressReceiver(secrets, handle, refuse))
        return listenHttps(app as unknown as RequestListener)
      }),
      rotating: yield* recipe((secrets, handle, refuse) =>
        listenHttps(getRequestListener(honoReceiver(secrets, handle, refuse).fetch))
      )
    }
  })
)

type Endpoint = { id: string; secret: string }
type Delivery = { event_id: string; response_status: number | null; outcome: string }

const call = callApi

const register = (api: MerchantClient, receiver: Receiver) =>
  Effect.map(
    call<Endpoint>(api, "POST", "/v1/webhooks", { url: `https://${HOST}:${receiver.port}/webhooks` }),
    (created) => {
      assert.strictEqual(created.status, 201)
      return created.body
    }
  )

const sendTest = (api: MerchantClient, endpoint: Endpoint) =>
  Effect.map(call<{ event_id: string }>(api, "POST", `/v1/webhooks/${endpoint.id}/test`), (sent) => {
    assert.strictEqual(sent.status, 202, JSON.stringify(sent.body))
    return sent.body.event_id
  })

const readyRequest = (service: RunningService, api: MerchantClient) =>
  readyRequestOf(service, api, "3.000000", "recipes")

const handledIds = (receiver: Receiver) => receiver.handled.map((event) => event.id)

const deliveries = (api: MerchantClient, endpoint: Endpoint) =>
  Effect.map(
    call<{ deliveries: Array<Delivery> }>(api, "GET", `/v1/webhooks/${endpoint.id}/deliveries`),
    (page) => page.body.deliveries
  )

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("receiver recipes", () => {
    it.effect(
      "Express 5, Fastify and Hono verify a test event and a lifecycle event delivered over HTTPS",
      () =>
        Effect.gen(function* () {
          const fixture = yield* Fixture
          const api = yield* newMerchantClient(fixture.service)
          const receivers = { express: fixture.express, fastify: fixture.fastify, hono: fixture.hono }
          const endpoints: Record<string, Endpoint> = {}
          for (const [name, receiver] of Object.entries(receivers)) {
            const endpoint = yield* register(api, receiver)
            receiver.secrets.push(endpoint.secret)
            endpoints[name] = endpoint
          }
          const testEvents: Record<string, string> = {}
          for (const [name, endpoint] of Object.entries(endpoints))
            testEvents[name] = yield* sendTest(api, endpoint)
          const requestId = yield* readyRequest(fixture.service, api)

          for (const [name, receiver] of Object.entries(receivers)) {
            const ready = () => receiver.handled.find((event) => event.type === "deposit_request.ready")
            assert.isTrue(
              yield* eventually(
                Effect.sync(() => handledIds(receiver).includes(testEvents[name]!) && ready() !== undefined),
                20_000
              ),
              `${name} handled ${JSON.stringify(handledIds(receiver))}`
            )
            const test = receiver.handled.find((event) => event.id === testEvents[name])!
            assert.strictEqual(test.type, "webhook.test")
            if (test.type === "webhook.test") assert.strictEqual(test.data.webhook_id, endpoints[name]!.id)
            const event = ready()!
            if (event.type === "deposit_request.ready") {
              assert.strictEqual(event.data.deposit_request.id, requestId)
              assert.strictEqual(event.data.deposit_request.amount, "3.000000")
            } else assert.fail("not the ready event")
            assert.deepStrictEqual(receiver.refused, [])
            // The service recorded the recipe's 2xx for both deliveries.
            assert.isTrue(
              yield* eventually(
                Effect.map(
                  deliveries(api, endpoints[name]!),
                  (rows) =>
                    rows.filter((row) => row.response_status === 200 && row.outcome === "succeeded").length >=
                    2
                ),
                10_000
              )
            )
          }
        })
    )

    it.effect("an Express app with express.json() in front refuses the delivery as body_reserialised", () =>
      Effect.gen(function* () {
        const fixture = yield* Fixture
        const receiver = fixture.expressWithJson
        const api = yield* newMerchantClient(fixture.service)
        const endpoint = yield* register(api, receiver)
        receiver.secrets.push(endpoint.secret)
        yield* sendTest(api, endpoint)
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => receiver.refused.length >= 1),
            20_000
          )
        )
        assert.strictEqual(receiver.refused[0]!.code, "body_reserialised")
        assert.deepStrictEqual(receiver.handled, [])
        assert.isTrue(
          yield* eventually(
            Effect.map(deliveries(api, endpoint), (rows) => rows.some((row) => row.response_status === 400)),
            10_000
          )
        )
      })
    )

    it.effect(
      "during a secret rotation, deliveries signed with the old and the new secret verify with [new, old]",
      () =>
        Effect.gen(function* () {
          const fixture = yield* Fixture
          const receiver = fixture.rotating
          const api = yield* newMerchantClient(fixture.service)
          const old = yield* register(api, receiver)
          receiver.secrets.push(old.secret)
          // The spec's rotation: register the same URL again for a new secret; both endpoints stay active until
          // the old one is disabled.
          const rotated = yield* register(api, receiver)
          assert.notStrictEqual(rotated.secret, old.secret)
          receiver.secrets.splice(0, receiver.secrets.length, rotated.secret, old.secret)

          const signedWithOld = yield* sendTest(api, old)
          const signedWithNew = yield* sendTest(api, rotated)
          yield* readyRequest(fixture.service, api)
          assert.isTrue(
            yield* eventually(
              Effect.sync(
                () =>
                  handledIds(receiver).includes(signedWithOld) &&
                  handledIds(receiver).includes(signedWithNew) &&
                  receiver.handled.some((event) => event.type === "deposit_request.ready")
              ),
              20_000
            ),
            JSON.stringify(handledIds(receiver))
          )
          assert.deepStrictEqual(receiver.refused, [])
          // The lifecycle event went to both endpoints (one signature each) and was handled once, by its id.
          const readyIds = receiver.handled.filter((event) => event.type === "deposit_request.ready")
          assert.strictEqual(readyIds.length, 1)
          for (const endpoint of [old, rotated]) {
            assert.isTrue(
              yield* eventually(
                Effect.map(
                  deliveries(api, endpoint),
                  (rows) =>
                    rows.filter((row) => row.event_id === readyIds[0]!.id && row.response_status === 200)
                      .length === 1
                ),
                10_000
              )
            )
          }

          // With the old secret dropped, a delivery it signed is refused.
          receiver.secrets.splice(1)
          const refusedBefore = receiver.refused.length
          yield* sendTest(api, old)
          assert.isTrue(
            yield* eventually(
              Effect.sync(() => receiver.refused.length > refusedBefore),
              20_000
            )
          )
          assert.strictEqual(receiver.refused.at(-1)!.code, "signature_mismatch")
        })
    )

    it.effect(
      "after a rotation in place, a recipe holding only the old or only the new secret verifies every delivery",
      () =>
        Effect.gen(function* () {
          const fixture = yield* Fixture
          const receiver = fixture.rotating
          const api = yield* newMerchantClient(fixture.service)
          const endpoint = yield* register(api, receiver)
          const rotate = (body: unknown) =>
            Effect.map(
              call<Endpoint>(api, "POST", `/v1/webhooks/${endpoint.id}/rotate-secret`, body),
              (rotated) => {
                assert.strictEqual(rotated.status, 200, JSON.stringify(rotated.body))
                return rotated.body.secret
              }
            )
          const handledWith = (secret: string) =>
            Effect.gen(function* () {
              receiver.secrets.splice(0, receiver.secrets.length, secret)
              const id = yield* sendTest(api, endpoint)
              return yield* eventually(
                Effect.sync(() => handledIds(receiver).includes(id)),
                20_000
              )
            })
          const fresh = yield* rotate({})
          const refusedBefore = receiver.refused.length
          // During the grace the receiver may still hold the old secret, or already the new one.
          assert.isTrue(yield* handledWith(endpoint.secret))
          assert.isTrue(yield* handledWith(fresh))
          assert.strictEqual(receiver.refused.length, refusedBefore)
          // A rotation without grace: the secret it replaced no longer signs.
          yield* rotate({ expires_in_hours: 0 })
          receiver.secrets.splice(0, receiver.secrets.length, fresh)
          yield* sendTest(api, endpoint)
          assert.isTrue(
            yield* eventually(
              Effect.sync(() => receiver.refused.length > refusedBefore),
              20_000
            )
          )
          assert.strictEqual(receiver.refused.at(-1)!.code, "signature_mismatch")
        })
    )
  })
})
