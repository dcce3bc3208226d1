import { Effect, Option } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChangeFeed } from "../../../services/platform/ChangeFeed"
import { createTestDatabase } from "../../support/Database"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"
import { type RunningService, startService } from "../../support/Service"

let db: { url: string; drop: () => Promise<void> }
let a: RunningService
let b: RunningService
let merchant: Merchant

beforeAll(async () => {
  db = await createTestDatabase()
  // Two instances on one database, talking through the real NATS server.
  const config = { natsUrl: Option.some("nats://127.0.0.1:4222"), rateLimitCapacity: 10_000 }
  a = await startService({ database: db, config })
  b = await startService({ database: db, config })
  merchant = await createMerchant(db.url)
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
  await db?.drop()
})

const seed = async () => `dr_${await a.runtime.runPromise(seedDepositRequest(merchant.accountId.slice(5)))}`
const read = (service: RunningService, id: string, query = "") =>
  service.request(`/v1/deposit-requests/${id}${query}`, { headers: merchant.headers() })

describe("wait_for=change", () => {
  it("answers at once when the caller's version is already old", async () => {
    const id = await seed()
    const started = Date.now()
    const res = await read(b, id, "?wait_for=change&version=0&timeout=10")
    expect(res.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it("wakes a poll held on one instance within a second of a change committed through the other", async () => {
    const id = await seed()
    const current = (await (await read(a, id)).json()) as { version: string }
    const started = Date.now()
    const held = read(b, id, `?wait_for=change&version=${current.version}&timeout=20`)
    await new Promise((r) => setTimeout(r, 300))
    const changedAt = Date.now()
    const patch = await a.request(`/v1/deposit-requests/${id}`, {
      method: "PATCH",
      headers: merchant.headers("api_key", { "content-type": "application/json" }),
      body: JSON.stringify({ heading: "changed" })
    })
    expect(patch.status).toBe(200)
    const res = await held
    const body = (await res.json()) as { version: string; heading: string }
    expect(body.heading).toBe("changed")
    expect(BigInt(body.version)).toBeGreaterThan(BigInt(current.version))
    expect(res.headers.get("cache-control")).toBe("no-store")
    expect(Date.now() - changedAt).toBeLessThan(1000)
    expect(Date.now() - started).toBeGreaterThanOrEqual(300)
  })

  it("answers a parked poll exactly as the route answers: same body, request id, rate-limit and CORS headers", async () => {
    const id = await seed()
    const current = (await (await read(a, id)).json()) as { version: string }
    const requestId = "req-parked-poll-1"
    const merchantPoll = b.request(`/v1/deposit-requests/${id}?wait_for=change&version=${current.version}`, {
      headers: merchant.headers("api_key", { "x-request-id": requestId })
    })
    const payerPoll = b.request(
      `/v1/payer/deposit-requests/${id}?wait_for=change&version=${current.version}`,
      {
        headers: { origin: "https://wallet.example" }
      }
    )
    await new Promise((r) => setTimeout(r, 300))
    const patch = await a.request(`/v1/deposit-requests/${id}`, {
      method: "PATCH",
      headers: merchant.headers("api_key", { "content-type": "application/json" }),
      body: JSON.stringify({ reference: "parked" })
    })
    expect(patch.status).toBe(200)
    const [merchantRes, payerRes] = await Promise.all([merchantPoll, payerPoll])
    expect(merchantRes.status).toBe(200)
    expect(merchantRes.headers.get("x-request-id")).toBe(requestId)
    expect(merchantRes.headers.get("x-ratelimit-limit")).toBe("10000")
    expect(merchantRes.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await merchantRes.json()).toEqual(await (await read(b, id)).json())
    expect(payerRes.status).toBe(200)
    expect(payerRes.headers.get("access-control-allow-origin")).toBe("*")
    expect(payerRes.headers.get("cache-control")).toBe("no-store")
    const payerNow = await b.request(`/v1/payer/deposit-requests/${id}`)
    expect(await payerRes.json()).toEqual(await payerNow.json())
  })

  it("answers its parked polls at once when an instance shuts down, instead of holding the shutdown", async () => {
    const id = await seed()
    const c = await startService({ database: db, config: { rateLimitCapacity: 10_000 } })
    const current = (await (await read(c, id)).json()) as { version: string }
    const held = read(c, id, `?wait_for=change&version=${current.version}&timeout=25`)
    const parkedUntil = Date.now() + 3000
    const waiting = () => c.runtime.runPromise(Effect.map(ChangeFeed, (feed) => feed.waiting()))
    while (Date.now() < parkedUntil && (await waiting()) === 0) await new Promise((r) => setTimeout(r, 20))
    const stopping = Date.now()
    await c.stop()
    const res = await held
    expect(res.status).toBe(200)
    expect(res.headers.get("connection")).toBe("close")
    expect(((await res.json()) as { version: string }).version).toBe(current.version)
    expect(Date.now() - stopping).toBeLessThan(5000)
  })

  it("answers at once, closing its connection, a poll that parks after its instance began shutting down", async () => {
    const id = await seed()
    const c = await startService({ database: db, config: { rateLimitCapacity: 10_000 } })
    const current = (await (await read(c, id)).json()) as { version: string }
    // The poll's first read waits on this lock, so it parks only after the shutdown began.
    const lock = new pg.Client({ connectionString: db.url })
    await lock.connect()
    await lock.query("begin")
    await lock.query("lock table deposit_requests in access exclusive mode")
    const held = read(c, id, `?wait_for=change&version=${current.version}&timeout=25`)
    const waiting = () => c.runtime.runPromise(Effect.map(ChangeFeed, (feed) => feed.waiting()))
    const subscribedUntil = Date.now() + 3000
    while (Date.now() < subscribedUntil && (await waiting()) === 0)
      await new Promise((r) => setTimeout(r, 20))
    const stopping = Date.now()
    const stopped = c.stop()
    await new Promise((r) => setTimeout(r, 300))
    await lock.query("rollback")
    await lock.end()
    const res = await held
    expect(res.status).toBe(200)
    // It began before the close, yet its connection closes with it: the client's next poll must not come on a
    // kept-alive connection to an instance whose handlers are going (see serverShutdown.test.ts).
    expect(res.headers.get("connection")).toBe("close")
    expect(((await res.json()) as { version: string }).version).toBe(current.version)
    expect(Date.now() - stopping).toBeLessThan(5000)
    await stopped
  })

  it("holds at most the per-address cap of polls from a burst; the rest answer at once", async () => {
    const capped = await startService({
      database: db,
      config: {
        natsUrl: Option.some("nats://127.0.0.1:4222"),
        rateLimitCapacity: 10_000,
        longPollMaxPerAddress: 50
      }
    })
    try {
      const id = await seed()
      const current = (await (await read(capped, id)).json()) as { version: string }
      let answered = 0
      const polls = Array.from({ length: 400 }, async () => {
        const res = await read(capped, id, `?wait_for=change&version=${current.version}&timeout=30`)
        await res.arrayBuffer()
        answered++
        return res.status
      })
      // Polls over the cap answer at once; a held one only at a change or its timeout (27 s at the earliest), so
      // after the burst has settled exactly the cap is still waiting, however slow the machine is.
      const until = Date.now() + 20_000
      while (answered < 350 && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
      await new Promise((r) => setTimeout(r, 500))
      expect(answered).toBe(350)
      const patched = await capped.request(`/v1/deposit-requests/${id}`, {
        method: "PATCH",
        headers: merchant.headers("api_key", { "content-type": "application/json" }),
        body: JSON.stringify({ reference: "wake the held polls" })
      })
      expect(patched.status).toBe(200)
      expect(await Promise.all(polls)).toEqual(Array(400).fill(200))
    } finally {
      await capped.stop()
    }
  })

  it("answers the unchanged resource at the timeout", async () => {
    const id = await seed()
    const current = (await (await read(a, id)).json()) as { version: string }
    const started = Date.now()
    const res = await read(b, id, `?wait_for=change&version=${current.version}&timeout=1`)
    const elapsed = Date.now() - started
    expect(res.status).toBe(200)
    expect(((await res.json()) as { version: string }).version).toBe(current.version)
    expect(elapsed).toBeGreaterThanOrEqual(850)
    expect(elapsed).toBeLessThan(3000)
  })

  it("needs the version, and releases the waiter at once when the client goes away", async () => {
    const id = await seed()
    const noVersion = await read(b, id, "?wait_for=change")
    expect(noVersion.status).toBe(400)
    const current = (await (await read(a, id)).json()) as { version: string }
    const waiting = () => b.runtime.runPromise(Effect.map(ChangeFeed, (feed) => feed.waiting()))
    const controller = new AbortController()
    const held = b
      .request(`/v1/deposit-requests/${id}?wait_for=change&version=${current.version}&timeout=20`, {
        headers: merchant.headers(),
        signal: controller.signal
      })
      .catch(() => "aborted")
    const until = Date.now() + 3000
    while (Date.now() < until && (await waiting()) === 0) await new Promise((r) => setTimeout(r, 20))
    expect(await waiting()).toBe(1)
    controller.abort()
    expect(await held).toBe("aborted")
    const release = Date.now() + 2000
    while (Date.now() < release && (await waiting()) > 0) await new Promise((r) => setTimeout(r, 20))
    expect(await waiting()).toBe(0)
  })
})
