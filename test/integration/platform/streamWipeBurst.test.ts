import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import type { ChainService } from "../../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import type { LocalChain } from "../../support/LocalChain"
import { privateNats } from "../../support/NatsServer"
import { readyRequest } from "../../support/Payer"
import { scopedChainService, scopedLocalChain } from "../../support/scopedChainService"

/**
 * Issue 20: NATS killed mid-burst and restarted with its store wiped. Credits and delivery jobs travel on
 * JetStream, PostgreSQL keeps both: whatever the broker lost is published again from PostgreSQL, and every credit is
 * applied once, every request deposited once, every webhook delivered with the same id and bytes, none twice.
 */
const HOST = "hooks.wipe-burst.test"
const tls = makeCertificates(HOST)
const REQUESTS = 12
const AMOUNT = 2_000_000n

/** A local chain, a private NATS the test can kill, a merchant's receiver, and the service on all three. */
class WipeBurst extends Context.Tag("test/WipeBurst")<
  WipeBurst,
  {
    readonly local: LocalChain
    readonly nats: Awaited<ReturnType<typeof privateNats>>
    readonly receiver: Awaited<ReturnType<typeof startReceiver>>
    readonly running: ChainService
  }
>() {}

const WipeBurstLive = Layer.scoped(
  WipeBurst,
  Effect.gen(function* () {
    const local = yield* scopedLocalChain()
    const nats = yield* Effect.acquireRelease(
      Effect.promise(() => privateNats()),
      (n) => Effect.promise(() => n.stop())
    )
    // Every other answer fails, so some events are attempted again across the outage.
    const receiver = yield* Effect.acquireRelease(
      Effect.promise(() => startReceiver(tls, (n) => (n % 3 === 1 ? 500 : 200))),
      (r) => Effect.promise(() => r.close())
    )
    const running = yield* scopedChainService(local, {
      mineWhileWaiting: true,
      config: { natsUrl: Option.some(nats.url), webhookFirstRetryMs: 300 },
      service: { webhookNetwork: localReceiverNetwork(HOST, tls.ca) }
    })
    return { local, nats, receiver, running }
  })
)

// Real time throughout: the service, the broker and the chain run on the wall clock, so the test does too.
layer(WipeBurstLive, { timeout: 60_000, excludeTestServices: true })(
  "NATS killed mid-burst, its store wiped",
  (it) => {
    it.effect(
      "applies every credit once and delivers every event with the same id and bytes, none twice",
      () =>
        Effect.gen(function* () {
          const { local, nats, receiver, running } = yield* WipeBurst
          const count = async (query: string) =>
            Number((await running.db.query<{ n: string }>(query)).rows[0]?.n ?? 0)
          const hook = yield* Effect.promise(() =>
            running.api.call("POST", "/v1/webhooks", {
              url: `https://${HOST}:${receiver.port}/hooks`
            })
          )
          assert.strictEqual(hook.status, 201)
          const payer = anvilDevAccount(6)
          const requests: Array<{ id: string; address: `0x${string}` }> = []
          for (let i = 0; i < REQUESTS; i++) {
            requests.push(yield* Effect.promise(() => readyRequest({ ...running, payer }, "2.000000")))
          }
          yield* Effect.promise(() => local.mint(payer.address, AMOUNT * BigInt(REQUESTS)))
          const deposited = () =>
            count("select count(*) as n from lifecycle_events where type = 'deposit_request.deposited'")

          // The first half is paid and starts flowing; the broker is killed with its store wiped mid-way.
          for (const r of requests.slice(0, REQUESTS / 2))
            yield* Effect.promise(() => local.pay(payer, r.address, AMOUNT))
          yield* Effect.promise(() =>
            local.mineUntil(async () => ((await deposited()) >= 2 ? true : undefined))
          )
          yield* Effect.promise(() => nats.killAndWipe())
          const atKill = yield* Effect.promise(deposited)
          // The second half is paid and becomes final while there is no broker at all.
          for (const r of requests.slice(REQUESTS / 2))
            yield* Effect.promise(() => local.pay(payer, r.address, AMOUNT))
          yield* Effect.promise(() => local.chain.mine({ blocks: 12 }))
          yield* Effect.sleep("1 second")
          const recordedWhileDown = yield* Effect.promise(() =>
            count("select count(*) as n from chain_credits")
          )
          yield* Effect.promise(() => nats.start())

          yield* Effect.promise(() =>
            local.mineUntil(async () => ((await deposited()) === REQUESTS ? true : undefined), 90_000)
          )
          const depositedEvents = yield* Effect.promise(() =>
            running.db.query<{ id: string }>(
              "select id from lifecycle_events where type = 'deposit_request.deposited'"
            )
          )
          const eventIds = depositedEvents.rows.map((r) => `evt_${r.id}`)
          const deliveredOnce = () =>
            count(
              `select count(*) as n from webhook_deliveries d join lifecycle_events e on e.id = d.event_id
         where e.type = 'deposit_request.deposited' and d.outcome = 'succeeded'`
            )
          const until = Date.now() + 60_000
          while (Date.now() < until && (yield* Effect.promise(deliveredOnce)) < REQUESTS)
            yield* Effect.sleep("200 millis")

          const credits = yield* Effect.promise(() => count("select count(*) as n from chain_credits"))
          const applied = yield* Effect.promise(() =>
            count("select count(*) as n from chain_credits where applied_at is not null")
          )
          const creditEvents = yield* Effect.promise(() =>
            count("select count(*) as n from applied_events where event_id like 'credit:%'")
          )
          const succeeded = yield* Effect.promise(deliveredOnce)
          const attempts = receiver.received.filter((r) =>
            eventIds.includes(String(r.headers["service-event-id"]))
          )
          console.log(
            `requests ${REQUESTS}; deposited when killed ${atKill}; credits recorded by the restart ${recordedWhileDown}; ` +
              `credits ${credits}, applied ${applied}, credit events ${creditEvents}; deposited events ${depositedEvents.rowCount}; ` +
              `deposited deliveries: ${attempts.length} attempts, ${succeeded} succeeded`
          )
          assert.strictEqual(credits, REQUESTS)
          assert.strictEqual(applied, REQUESTS)
          assert.strictEqual(creditEvents, REQUESTS)
          assert.strictEqual(depositedEvents.rowCount, REQUESTS)
          // One success per event: nothing delivered twice; every attempt of an event carried the same bytes.
          assert.strictEqual(succeeded, REQUESTS)
          const bodies = new Map<string, Set<string>>()
          for (const a of attempts) {
            const id = String(a.headers["service-event-id"])
            bodies.set(id, (bodies.get(id) ?? new Set()).add(a.body.toString("utf8")))
          }
          assert.strictEqual(bodies.size, REQUESTS)
          for (const [id, set] of bodies) assert.strictEqual(set.size, 1, `bodies sent for ${id}`)
          const answeredOk = yield* Effect.promise(() =>
            count(
              `select count(*) as n from (select d.event_id from webhook_deliveries d join lifecycle_events e on e.id = d.event_id
       where e.type = 'deposit_request.deposited' and d.outcome = 'succeeded' group by 1 having count(*) > 1) twice`
            )
          )
          assert.strictEqual(answeredOk, 0)
        }),
      240_000
    )
  }
)
