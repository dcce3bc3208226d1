import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { type ChainService, startChainService } from "../../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { privateNats } from "../../support/NatsServer"
import { readyRequest } from "../../support/Payer"

/**
 * Issue 20: NATS killed mid-burst and restarted with its store wiped. Credits and delivery jobs travel on
 * JetStream, PostgreSQL keeps both: whatever the broker lost is published again from PostgreSQL, and every credit is
 * applied once, every request deposited once, every webhook delivered with the same id and bytes, none twice.
 */
const HOST = "hooks.wipe-burst.test"
const tls = makeCertificates(HOST)
const REQUESTS = 12
const AMOUNT = 2_000_000n

let local: LocalChain
let nats: Awaited<ReturnType<typeof privateNats>>
let receiver: Awaited<ReturnType<typeof startReceiver>>
let running: ChainService

beforeAll(async () => {
  local = await startLocalChain()
  nats = await privateNats()
  // Every other answer fails, so some events are attempted again across the outage.
  receiver = await startReceiver(tls, (n) => (n % 3 === 1 ? 500 : 200))
  running = await startChainService(local, {
    mineWhileWaiting: true,
    config: { natsUrl: Option.some(nats.url), webhookFirstRetryMs: 300 },
    service: { webhookNetwork: localReceiverNetwork(HOST, tls.ca) }
  })
}, 60_000)
afterAll(async () => {
  await running?.stop()
  await receiver?.close()
  await nats?.stop()
  await local?.node.stop()
})

const count = async (query: string) => Number((await running.db.query<{ n: string }>(query)).rows[0]?.n ?? 0)

describe("NATS killed mid-burst, its store wiped", () => {
  it("applies every credit once and delivers every event with the same id and bytes, none twice", async () => {
    const hook = await running.api.call("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}/hooks`
    })
    expect(hook.status).toBe(201)
    const payer = anvilDevAccount(6)
    const requests: Array<{ id: string; address: `0x${string}` }> = []
    for (let i = 0; i < REQUESTS; i++) {
      requests.push(await readyRequest({ ...running, payer }, "2.000000"))
    }
    await local.mint(payer.address, AMOUNT * BigInt(REQUESTS))
    const deposited = () =>
      count("select count(*) as n from lifecycle_events where type = 'deposit_request.deposited'")

    // The first half is paid and starts flowing; the broker is killed with its store wiped mid-way.
    for (const r of requests.slice(0, REQUESTS / 2)) await local.pay(payer, r.address, AMOUNT)
    await local.mineUntil(async () => ((await deposited()) >= 2 ? true : undefined))
    await nats.killAndWipe()
    const atKill = await deposited()
    // The second half is paid and becomes final while there is no broker at all.
    for (const r of requests.slice(REQUESTS / 2)) await local.pay(payer, r.address, AMOUNT)
    await local.chain.mine({ blocks: 12 })
    await new Promise((r) => setTimeout(r, 1_000))
    const recordedWhileDown = await count("select count(*) as n from chain_credits")
    await nats.start()

    await local.mineUntil(async () => ((await deposited()) === REQUESTS ? true : undefined), 90_000)
    const depositedEvents = await running.db.query<{ id: string }>(
      "select id from lifecycle_events where type = 'deposit_request.deposited'"
    )
    const eventIds = depositedEvents.rows.map((r) => `evt_${r.id}`)
    const deliveredOnce = async () =>
      count(
        `select count(*) as n from webhook_deliveries d join lifecycle_events e on e.id = d.event_id
         where e.type = 'deposit_request.deposited' and d.outcome = 'succeeded'`
      )
    const until = Date.now() + 60_000
    while (Date.now() < until && (await deliveredOnce()) < REQUESTS)
      await new Promise((r) => setTimeout(r, 200))

    const credits = await count("select count(*) as n from chain_credits")
    const applied = await count("select count(*) as n from chain_credits where applied_at is not null")
    const creditEvents = await count(
      "select count(*) as n from applied_events where event_id like 'credit:%'"
    )
    const succeeded = await deliveredOnce()
    const attempts = receiver.received.filter((r) => eventIds.includes(String(r.headers["service-event-id"])))
    console.log(
      `requests ${REQUESTS}; deposited when killed ${atKill}; credits recorded by the restart ${recordedWhileDown}; ` +
        `credits ${credits}, applied ${applied}, credit events ${creditEvents}; deposited events ${depositedEvents.rowCount}; ` +
        `deposited deliveries: ${attempts.length} attempts, ${succeeded} succeeded`
    )
    expect(credits).toBe(REQUESTS)
    expect(applied).toBe(REQUESTS)
    expect(creditEvents).toBe(REQUESTS)
    expect(depositedEvents.rowCount).toBe(REQUESTS)
    // One success per event: nothing delivered twice; every attempt of an event carried the same bytes.
    expect(succeeded).toBe(REQUESTS)
    const bodies = new Map<string, Set<string>>()
    for (const a of attempts) {
      const id = String(a.headers["service-event-id"])
      bodies.set(id, (bodies.get(id) ?? new Set()).add(a.body.toString("utf8")))
    }
    expect(bodies.size).toBe(REQUESTS)
    for (const set of bodies.values()) expect(set.size).toBe(1)
    const answeredOk = await count(
      `select count(*) as n from (select d.event_id from webhook_deliveries d join lifecycle_events e on e.id = d.event_id
       where e.type = 'deposit_request.deposited' and d.outcome = 'succeeded' group by 1 having count(*) > 1) twice`
    )
    expect(answeredOk).toBe(0)
  }, 240_000)
})
