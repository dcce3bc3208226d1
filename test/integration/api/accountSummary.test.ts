import { privateKeyToAccount, generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { merchantClient } from "../../support/Api"
import { type ChainService, startChainService } from "../../support/ChainService"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { readyRequest } from "../../support/Payer"

/**
 * `GET /v1/account/summary` (issue 48, item 1): the figures equal what the test paid and settled, a settlement
 * counts on its local day in the zone asked for, a bad zone is a 400 naming the field, another account's requests
 * are not counted, and the key and a dashboard session read the same answer.
 */
const ZONE = "America/Los_Angeles"

interface Period {
  readonly from: string
  readonly settled_volume: string
  readonly settled_volume_base_units: string
  readonly settled_count: number
  readonly created_count: number
}
interface Summary {
  readonly time_zone: string
  readonly generated_at: string
  readonly periods: { readonly today: Period; readonly last_7_days: Period; readonly last_30_days: Period }
  readonly days: ReadonlyArray<{
    readonly date: string
    readonly settled_volume_base_units: string
    readonly settled_count: number
  }>
  readonly needs_action: {
    readonly needs_attention_count: number
    readonly expiring_soon_count: number
    readonly held_transfer_count: number
    readonly requests: ReadonlyArray<{ readonly deposit_request_id: string; readonly reason: string }>
  }
  readonly failing_endpoints: ReadonlyArray<{
    readonly webhook_id: string
    readonly url: string
    readonly last_outcome: string
    readonly last_response_status: number | null
    readonly failures_last_hour: number
  }>
  readonly recent_events: ReadonlyArray<{
    readonly id: string
    readonly type: string
    readonly deposit_request_id: string | null
  }>
}

let local: LocalChain
let running: ChainService
let other: Merchant
let mining: ReturnType<typeof setInterval> | undefined

const localDate = (at: Date, zone: string) =>
  new Intl.DateTimeFormat("en-CA", {
    timeZone: zone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit"
  }).format(at)

const summary = async (
  zone?: string,
  merchant: Merchant = running.merchant,
  via: "api_key" | "session" = "api_key"
) => {
  const res = await running.service.request(
    `/v1/account/summary${zone === undefined ? "" : `?time_zone=${encodeURIComponent(zone)}`}`,
    { headers: merchant.headers(via) }
  )
  return {
    status: res.status,
    body: (await res.json()) as Summary & { error?: { code: string; param?: string } }
  }
}

/** Pays `units` into a fresh request of the merchant's and waits for its settlement. */
const paySettled = async (api: typeof running.api, payerIndex: number, units: bigint) => {
  const payer = anvilDevAccount(payerIndex)
  const amount = `${units / 1_000_000n}.${(units % 1_000_000n).toString().padStart(6, "0")}`
  const paid = await readyRequest(
    { service: running.service, api, payer },
    amount,
    privateKeyToAccount(generatePrivateKey()).address
  )
  await local.mint(payer.address, units)
  await local.pay(payer, paid.address, units)
  for (let i = 0; i < 200; i++) {
    const r = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${paid.id}`)
    if (r.body.status === "settled") return paid.id
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${paid.id} did not settle`)
}

const paidUnits = [1_250_000n, 2_000_001n]
const paidIds: Array<string> = []

beforeAll(async () => {
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  other = await createMerchant(running.service.databaseUrl)
  for (const [i, units] of paidUnits.entries()) paidIds.push(await paySettled(running.api, 5 + i, units))
  // Another account's settlement, which must not count here.
  await paySettled(merchantClient(running.service, other), 8, 7_000_000n)
}, 120_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await running?.stop()
  await local?.node.stop()
})

describe("GET /v1/account/summary", () => {
  it("counts what was paid and settled today, for this account only", async () => {
    const { status, body } = await summary(ZONE)
    expect(status).toBe(200)
    expect(body.time_zone).toBe(ZONE)
    const total = paidUnits.reduce((a, b) => a + b, 0n)
    for (const period of [body.periods.today, body.periods.last_7_days, body.periods.last_30_days]) {
      expect(period.settled_volume_base_units).toBe(total.toString())
      expect(period.settled_volume).toBe("3.250001")
      expect(period.settled_count).toBe(2)
      expect(period.created_count).toBe(2)
    }
    expect(body.days).toHaveLength(30)
    const today = body.days.at(-1)!
    expect(today.date).toBe(localDate(new Date(), ZONE))
    expect(today.settled_volume_base_units).toBe(total.toString())
    // The settled events are the newest, each naming its request.
    const settled = body.recent_events.filter((e) => e.type === "deposit_request.settled")
    expect(settled.map((e) => e.deposit_request_id).sort()).toEqual([...paidIds].sort())
    expect(body.recent_events.length).toBeLessThanOrEqual(10)

    const theirs = await summary(ZONE, other)
    expect(theirs.body.periods.today.settled_volume_base_units).toBe("7000000")
    expect(theirs.body.periods.today.settled_count).toBe(1)
    expect(theirs.body.recent_events.some((e) => paidIds.includes(e.deposit_request_id ?? ""))).toBe(false)
  })

  it("buckets a settlement on its local day: the day before in Los Angeles, the same date in UTC", async () => {
    const la = await summary(ZONE)
    // 22:00 the evening before, Los Angeles time: already the next date in UTC.
    const midnight = new Date(la.body.periods.today.from)
    expect(localDate(midnight, ZONE)).toBe(localDate(new Date(), ZONE))
    expect(
      new Intl.DateTimeFormat("en-US", { timeZone: ZONE, hour: "numeric", hourCycle: "h23" }).format(midnight)
    ).toBe("00")
    const evening = new Date(midnight.getTime() - 2 * 60 * 60 * 1000)
    expect(localDate(evening, ZONE)).not.toBe(localDate(evening, "UTC"))
    await running.db.query(
      "update lifecycle_events set occurred_at = $1 where deposit_request_id = $2 and type = 'deposit_request.settled'",
      [evening, paidIds[0]!.slice(3)]
    )
    const after = (await summary(ZONE)).body
    expect(after.periods.today.settled_count).toBe(1)
    expect(after.periods.today.settled_volume_base_units).toBe(paidUnits[1]!.toString())
    expect(after.periods.last_7_days.settled_count).toBe(2)
    const dayIn = (s: Summary, zone: string) => s.days.find((d) => d.date === localDate(evening, zone))
    expect(dayIn(after, ZONE)?.settled_volume_base_units).toBe(paidUnits[0]!.toString())
    const utc = (await summary()).body
    expect(utc.time_zone).toBe("UTC")
    const utcDay = dayIn(utc, "UTC")
    expect(utcDay?.settled_count).toBeGreaterThanOrEqual(1)
    expect(BigInt(utcDay?.settled_volume_base_units ?? "0") >= paidUnits[0]!).toBe(true)
    // The sums agree across the zones over 30 days (the window's edges are weeks away).
    expect(utc.periods.last_30_days.settled_volume_base_units).toBe(
      after.periods.last_30_days.settled_volume_base_units
    )
  })

  it("refuses a zone that is not an IANA name with a 400 naming the field", async () => {
    for (const zone of ["Mars/Olympus", "+05:00", "", "America/Los_Angeles; drop table"]) {
      const { status, body } = await summary(zone)
      expect(status).toBe(400)
      expect(body.error?.code).toBe("invalid_request")
      expect(body.error?.param).toBe("time_zone")
    }
  })

  it("answers the same figures to the API key and to a dashboard session", async () => {
    const byKey = await summary(ZONE, running.merchant, "api_key")
    const bySession = await summary(ZONE, running.merchant, "session")
    expect(bySession.status).toBe(200)
    expect(bySession.body.periods).toEqual(byKey.body.periods)
    expect(bySession.body.days).toEqual(byKey.body.days)
    const anonymous = await running.service.request("/v1/account/summary")
    expect(anonymous.status).toBe(401)
  })

  it("lists a paused request and one expiring within the hour under what needs action", async () => {
    const refs = await running.api.setup()
    const soon = await running.api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": crypto.randomUUID() }
    )
    await running.db.query(
      "update deposit_requests set expires_at = now() + interval '20 minutes' where id = $1",
      [soon.body.id.slice(3)]
    )
    const paused = await running.api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": crypto.randomUUID() }
    )
    await running.db.query("update deposit_requests set status = 'needs_attention' where id = $1", [
      paused.body.id.slice(3)
    ])
    const { body } = await summary(ZONE)
    expect(body.needs_action.needs_attention_count).toBe(1)
    expect(body.needs_action.expiring_soon_count).toBe(1)
    expect(body.needs_action.requests.map((r) => [r.deposit_request_id, r.reason])).toEqual([
      [paused.body.id, "needs_attention"],
      [soon.body.id, "expiring_soon"]
    ])
    const theirs = await summary(ZONE, other)
    expect(theirs.body.needs_action.requests).toEqual([])

    // A transfer held by the token gate comes first: money is stuck. The request is listed once.
    await running.db.query(
      `insert into held_transfers (command_id, deposit_request_id, topic, payload, code, reason, held_at)
       values ($1, $2, 'treasury.commands', '{}'::jsonb, 'payer_wallet_blocked', 'The payer wallet is blocked.', now())`,
      [`cmd-${soon.body.id}`, soon.body.id.slice(3)]
    )
    const held = (await summary(ZONE)).body.needs_action
    expect(held.held_transfer_count).toBe(1)
    expect(held.expiring_soon_count).toBe(1)
    expect(held.requests.map((r) => [r.deposit_request_id, r.reason])).toEqual([
      [soon.body.id, "held_transfer"],
      [paused.body.id, "needs_attention"]
    ])
  })

  it("lists an endpoint whose latest delivery failed, linking it, and not another account's", async () => {
    const endpointOf = async (accountId: string, url: string) => {
      const endpoint = crypto.randomUUID()
      await running.db.query(
        "insert into webhook_endpoints (id, account_id, url, secret, created_at) values ($1, $2, $3, 'whsec_x', now())",
        [endpoint, accountId.slice(5), url]
      )
      const event = await running.db.query<{ id: string }>(
        "select id from lifecycle_events where account_id = $1 order by id desc limit 1",
        [accountId.slice(5)]
      )
      const job = crypto.randomUUID()
      await running.db.query(
        `insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, attempts, state, next_attempt_at, created_at)
         values ($1, $2, $3, $4, false, 1, 'pending', now() + interval '1 minute', now())`,
        [job, accountId.slice(5), endpoint, event.rows[0]!.id]
      )
      await running.db.query(
        `insert into webhook_deliveries (id, account_id, endpoint_id, job_id, event_id, event_type, attempt, redelivery,
           outcome, response_status, error_kind, error_message, attempted_at, duration_ms, next_attempt_at)
         values ($1, $2, $3, $4, $5, 'deposit_request.settled', 1, false, 'retrying', 503, 'status', 'HTTP 503',
           now(), 12, now() + interval '1 minute')`,
        [crypto.randomUUID(), accountId.slice(5), endpoint, job, event.rows[0]!.id]
      )
      return `wh_${endpoint}`
    }
    const mine = await endpointOf(running.merchant.accountId, "https://shop.example.com/hooks")
    await endpointOf(other.accountId, "https://other.example.com/hooks")
    const { body } = await summary(ZONE)
    expect(
      body.failing_endpoints.map((e) => [
        e.webhook_id,
        e.url,
        e.last_outcome,
        e.last_response_status,
        e.failures_last_hour
      ])
    ).toEqual([[mine, "https://shop.example.com/hooks", "retrying", 503, 1]])
  })
})
