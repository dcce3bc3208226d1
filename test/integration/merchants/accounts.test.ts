import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ControlledClock } from "../../support/ControlledClock"
import { createTestDatabase } from "../../support/Database"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

const DAY = 24 * 60 * 60 * 1000
const clock = new ControlledClock()
let db: { url: string; drop: () => Promise<void> }
let service: RunningService
let merchant: Merchant

beforeAll(async () => {
  db = await createTestDatabase()
  service = await startService({ database: db, clock })
  merchant = await createMerchant(db.url)
})
afterAll(async () => {
  await service?.stop()
  await db?.drop()
})

const bearer = (credential: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${credential}`,
  ...extra
})
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code

describe("account and credentials", () => {
  it("answers GET /v1/account with the account, by API key or session", async () => {
    for (const via of ["api_key", "session"] as const) {
      const res = await service.request("/v1/account", { headers: merchant.headers(via) })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { id: string; environment: string; created_at: string }
      expect(body.id).toBe(merchant.accountId)
      expect(body.environment).toBe("sandbox")
      expect(body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
    }
  })

  it("refuses every bad credential with the same 401 unauthenticated", async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: "" },
      { authorization: "Basic dXNlcjpwYXNz" },
      { authorization: "Bearer" },
      { authorization: `Bearer ${merchant.apiKey}x` },
      { authorization: `Bearer ${merchant.apiKey.replace("service_test_", "service_live_")}` },
      { authorization: "Bearer service_test_unknown" },
      { authorization: "Bearer session_unknown" }
    ]
    const bodies = new Set<string>()
    for (const headers of cases) {
      const res = await service.request("/v1/account", { headers })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe("unauthenticated")
      bodies.add(body.error.message)
    }
    expect(bodies.size).toBe(1)
  })

  it("refuses an API key on key management with 401 identity_unauthorized", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const res = await service.request("/v1/account/api-key", {
        method,
        headers: merchant.headers("api_key")
      })
      expect(res.status).toBe(401)
      expect(await errorCode(res)).toBe("identity_unauthorized")
    }
  })

  it("issues, rotates with a 24-hour grace, then revokes both at once", async () => {
    const own = await createMerchant(db.url)
    const session = own.headers("session")
    const issue = async () => {
      const res = await service.request("/v1/account/api-key", { method: "POST", headers: session })
      expect(res.status).toBe(201)
      return (await res.json()) as { api_key: string; last4: string; previous_key_expires_at: string | null }
    }
    const works = async (key: string) =>
      (await service.request("/v1/account", { headers: bearer(key) })).status === 200

    const first = await issue()
    expect(first.api_key).toMatch(/^service_test_[A-Za-z0-9_-]{43}$/)
    expect(await works(first.api_key)).toBe(true)
    expect(await works(own.apiKey)).toBe(true) // the key createMerchant issued is now in its grace period

    const second = await issue()
    expect(second.previous_key_expires_at).not.toBeNull()
    expect(await works(second.api_key)).toBe(true)
    expect(await works(first.api_key)).toBe(true)
    expect(await works(own.apiKey)).toBe(false) // an older grace key ends when a newer rotation starts

    const info = (await (await service.request("/v1/account/api-key", { headers: session })).json()) as {
      active: { last4: string }
      previous: { last4: string }
    }
    expect(info.active.last4).toBe(second.last4)
    expect(info.previous.last4).toBe(first.last4)

    clock.advance(DAY - 60_000)
    expect(await works(first.api_key)).toBe(true)
    clock.advance(2 * 60_000)
    expect(await works(first.api_key)).toBe(false)
    expect(await works(second.api_key)).toBe(true)

    const third = await issue()
    expect(await works(second.api_key)).toBe(true)
    const revoke = await service.request("/v1/account/api-key", { method: "DELETE", headers: session })
    expect(revoke.status).toBe(204)
    expect(await works(third.api_key)).toBe(false)
    expect(await works(second.api_key)).toBe(false)
  })

  it("logs a dashboard session out", async () => {
    const own = await createMerchant(db.url)
    const refreshed = await service.request("/v1/account/session", {
      method: "POST",
      headers: own.headers("session")
    })
    expect(refreshed.status).toBe(201)
    const { session_token } = (await refreshed.json()) as { session_token: string }
    expect((await service.request("/v1/account", { headers: own.headers("session") })).status).toBe(401)
    expect((await service.request("/v1/account", { headers: bearer(session_token) })).status).toBe(200)
    const out = await service.request("/v1/account/session", {
      method: "DELETE",
      headers: bearer(session_token)
    })
    expect(out.status).toBe(204)
    expect((await service.request("/v1/account", { headers: bearer(session_token) })).status).toBe(401)
  })
})

describe("rate limit", () => {
  it("answers the 61st quick request with 429 and the headers, shared by two instances", async () => {
    const own = await createMerchant(db.url)
    const other = await startService({ database: db, clock })
    clock.freeze()
    try {
      for (let i = 0; i < 60; i++) {
        const target = i % 2 === 0 ? service : other
        const res = await target.request("/v1/account", { headers: own.headers() })
        expect(res.status).toBe(200)
        expect(res.headers.get("x-ratelimit-limit")).toBe("60")
        expect(res.headers.get("x-ratelimit-remaining")).toBe(String(59 - i))
        expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 5)
      }
      const limited = await other.request("/v1/account", { headers: own.headers() })
      expect(limited.status).toBe(429)
      expect(limited.headers.get("retry-after")).toBe("1")
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
      expect(await errorCode(limited)).toBe("rate_limited")
      // sessions are not rate limited
      expect((await service.request("/v1/account", { headers: own.headers("session") })).status).toBe(200)
      clock.advance(1000)
      expect((await service.request("/v1/account", { headers: own.headers() })).status).toBe(200)
      expect((await service.request("/v1/account", { headers: own.headers() })).status).toBe(429)
    } finally {
      await other.stop()
    }
  })

  it("stays exact when 100 requests race on two instances: 60 allowed, each remaining value once", async () => {
    const own = await createMerchant(db.url)
    const other = await startService({ database: db, clock })
    clock.freeze()
    try {
      // Concurrent requests on one instance share round trips; the shared bucket must still count every one.
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          (i % 2 === 0 ? service : other).request("/v1/account", { headers: own.headers() })
        )
      )
      const allowed = answers.filter((res) => res.status === 200)
      const limited = answers.filter((res) => res.status === 429)
      expect(allowed).toHaveLength(60)
      expect(limited).toHaveLength(40)
      const remaining = allowed.map((res) => Number(res.headers.get("x-ratelimit-remaining")))
      expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
      for (const res of limited) {
        expect(res.headers.get("x-ratelimit-remaining")).toBe("0")
        expect(res.headers.get("retry-after")).toBe("1")
      }
    } finally {
      await other.stop()
    }
  })
})

describe("CORS", () => {
  const preflight = (path: string, origin: string, method: string) =>
    service.request(path, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": method,
        "access-control-request-headers": "authorization"
      }
    })

  it("allows only the dashboard origin on merchant routes", async () => {
    const ok = await preflight("/v1/account", "http://localhost:3000", "GET")
    expect(ok.status).toBe(204)
    expect(ok.headers.get("access-control-allow-origin")).toBe("http://localhost:3000")
    expect(ok.headers.get("access-control-allow-headers")).toMatch(/Authorization/)
    const no = await preflight("/v1/account", "https://evil.example", "GET")
    expect(no.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("answers payer reads to any origin and payer writes only to the checkout origin", async () => {
    const read = await preflight("/v1/payer/deposit-requests/dr_x", "https://anyone.example", "GET")
    expect(read.headers.get("access-control-allow-origin")).toBe("*")
    // The default checkout origin is the service's own (where the hosted checkout is served).
    const own = new URL(service.baseUrl).origin
    const write = await preflight("/v1/payer/deposit-requests/dr_x/wallet", own, "POST")
    expect(write.headers.get("access-control-allow-origin")).toBe(own)
    const stranger = await preflight(
      "/v1/payer/deposit-requests/dr_x/wallet",
      "https://anyone.example",
      "POST"
    )
    expect(stranger.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("sets the origin on actual merchant answers", async () => {
    const res = await service.request("/v1/account", {
      headers: merchant.headers("session", { origin: "http://localhost:3000" })
    })
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:3000")
    expect(res.headers.get("access-control-expose-headers")).toMatch(/X-Request-Id/)
  })
})

describe("CLI", () => {
  it("creates an account with a session and a working sandbox key in one command", async () => {
    const { stdout } = await promisify(execFile)("npx", ["tsx", "src/cli.ts", "sandbox", "--json"], {
      env: { ...process.env, DATABASE_URL: db.url }
    })
    const out = JSON.parse(stdout) as { account_id: string; session_token: string; api_key: string }
    expect(out.account_id).toMatch(/^acct_/)
    const res = await service.request("/v1/account", { headers: bearer(out.api_key) })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { id: string }).id).toBe(out.account_id)
  })
})

describe("revocation across instances", () => {
  it("ends a key cached by another instance within moments, through the bus", async () => {
    const nats = { natsUrl: Option.some("nats://127.0.0.1:4222") }
    const a = await startService({ database: db, config: nats })
    const b = await startService({ database: db, config: nats })
    try {
      const own = await createMerchant(db.url)
      // b has the key cached now
      expect((await b.request("/v1/account", { headers: own.headers() })).status).toBe(200)
      expect((await b.request("/v1/account", { headers: own.headers() })).status).toBe(200)
      const revoke = await a.request("/v1/account/api-key", {
        method: "DELETE",
        headers: own.headers("session")
      })
      expect(revoke.status).toBe(204)
      const started = Date.now()
      let status = 200
      while (status === 200 && Date.now() - started < 1000) {
        status = (await b.request("/v1/account", { headers: own.headers() })).status
      }
      expect(status).toBe(401)
      expect(Date.now() - started).toBeLessThan(250)
    } finally {
      await a.stop()
      await b.stop()
    }
  })
})
