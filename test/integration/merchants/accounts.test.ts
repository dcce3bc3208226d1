import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { ControlledClock } from "../../support/ControlledClock"
import { createMerchant, type Merchant } from "../../support/Merchant"
import type { RunningService } from "../../support/Service"
import { scopedDatabase, scopedService } from "../../support/scopedResources"

const DAY = 24 * 60 * 60 * 1000

/** One database, a wall clock the test moves, the service on both, and a merchant account. */
class Fixture extends Context.Tag("test/Fixture")<
  Fixture,
  {
    readonly db: { readonly url: string; readonly drop: () => Promise<void> }
    readonly clock: ControlledClock
    readonly service: RunningService
    readonly merchant: Merchant
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const db = yield* scopedDatabase
    const clock = new ControlledClock()
    const service = yield* scopedService({ database: db, clock })
    const merchant = yield* Effect.promise(() => createMerchant(db.url))
    return { db, clock, service, merchant }
  })
)

/** Another instance of the service on the same database (and clock, unless told), stopped with the test. */
const anotherInstance = (config?: Parameters<typeof scopedService>[0]) =>
  Effect.flatMap(Fixture, ({ db, clock }) => scopedService(config ?? { database: db, clock }))
const newMerchant = Effect.flatMap(Fixture, ({ db }) => Effect.promise(() => createMerchant(db.url)))
const request = (path: string, init?: RequestInit, on?: RunningService) =>
  Effect.flatMap(Fixture, ({ service }) => Effect.promise(() => (on ?? service).request(path, init)))
const json = <T>(res: Response) => Effect.promise(() => res.json() as Promise<T>)
const errorCode = (res: Response) => Effect.map(json<{ error: { code: string } }>(res), (b) => b.error.code)
const bearer = (credential: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${credential}`,
  ...extra
})

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("account and credentials", () => {
    it.effect("answers GET /v1/account with the account, by API key or session", () =>
      Effect.gen(function* () {
        const { merchant } = yield* Fixture
        for (const via of ["api_key", "session"] as const) {
          const res = yield* request("/v1/account", { headers: merchant.headers(via) })
          assert.strictEqual(res.status, 200)
          const body = yield* json<{ id: string; environment: string; created_at: string }>(res)
          assert.strictEqual(body.id, merchant.accountId)
          assert.strictEqual(body.environment, "sandbox")
          assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
        }
      })
    )

    it.effect("refuses every bad credential with the same 401 unauthenticated", () =>
      Effect.gen(function* () {
        const { merchant } = yield* Fixture
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
          const res = yield* request("/v1/account", { headers })
          assert.strictEqual(res.status, 401)
          assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/)
          const body = yield* json<{ error: { code: string; message: string } }>(res)
          assert.strictEqual(body.error.code, "unauthenticated")
          bodies.add(body.error.message)
        }
        assert.strictEqual(bodies.size, 1)
      })
    )

    it.effect("refuses an API key on key management with 401 identity_unauthorized", () =>
      Effect.gen(function* () {
        const { merchant } = yield* Fixture
        for (const method of ["GET", "POST", "DELETE"]) {
          const res = yield* request("/v1/account/api-key", { method, headers: merchant.headers("api_key") })
          assert.strictEqual(res.status, 401)
          assert.strictEqual(yield* errorCode(res), "identity_unauthorized")
        }
      })
    )

    it.effect("issues, rotates with a 24-hour grace, then revokes both at once", () =>
      Effect.gen(function* () {
        const { clock } = yield* Fixture
        const own = yield* newMerchant
        const session = own.headers("session")
        const issue = Effect.gen(function* () {
          const res = yield* request("/v1/account/api-key", { method: "POST", headers: session })
          assert.strictEqual(res.status, 201)
          return yield* json<{ api_key: string; last4: string; previous_key_expires_at: string | null }>(res)
        })
        const works = (key: string) =>
          Effect.map(request("/v1/account", { headers: bearer(key) }), (res) => res.status === 200)

        const first = yield* issue
        assert.match(first.api_key, /^service_test_[A-Za-z0-9_-]{43}$/)
        assert.isTrue(yield* works(first.api_key))
        assert.isTrue(yield* works(own.apiKey)) // the key createMerchant issued is now in its grace period

        const second = yield* issue
        assert.isNotNull(second.previous_key_expires_at)
        assert.isTrue(yield* works(second.api_key))
        assert.isTrue(yield* works(first.api_key))
        assert.isFalse(yield* works(own.apiKey)) // an older grace key ends when a newer rotation starts

        const info = yield* json<{ active: { last4: string }; previous: { last4: string } }>(
          yield* request("/v1/account/api-key", { headers: session })
        )
        assert.strictEqual(info.active.last4, second.last4)
        assert.strictEqual(info.previous.last4, first.last4)

        clock.advance(DAY - 60_000)
        assert.isTrue(yield* works(first.api_key))
        clock.advance(2 * 60_000)
        assert.isFalse(yield* works(first.api_key))
        assert.isTrue(yield* works(second.api_key))

        const third = yield* issue
        assert.isTrue(yield* works(second.api_key))
        const revoke = yield* request("/v1/account/api-key", { method: "DELETE", headers: session })
        assert.strictEqual(revoke.status, 204)
        assert.isFalse(yield* works(third.api_key))
        assert.isFalse(yield* works(second.api_key))
      })
    )

    it.effect("logs a dashboard session out", () =>
      Effect.gen(function* () {
        const own = yield* newMerchant
        const refreshed = yield* request("/v1/account/session", {
          method: "POST",
          headers: own.headers("session")
        })
        assert.strictEqual(refreshed.status, 201)
        const { session_token } = yield* json<{ session_token: string }>(refreshed)
        assert.strictEqual((yield* request("/v1/account", { headers: own.headers("session") })).status, 401)
        assert.strictEqual((yield* request("/v1/account", { headers: bearer(session_token) })).status, 200)
        const out = yield* request("/v1/account/session", {
          method: "DELETE",
          headers: bearer(session_token)
        })
        assert.strictEqual(out.status, 204)
        assert.strictEqual((yield* request("/v1/account", { headers: bearer(session_token) })).status, 401)
      })
    )
  })

  describe("rate limit", () => {
    it.scoped("answers the 61st quick request with 429 and the headers, shared by two instances", () =>
      Effect.gen(function* () {
        const { service, clock } = yield* Fixture
        const own = yield* newMerchant
        const other = yield* anotherInstance()
        clock.freeze()
        for (let i = 0; i < 60; i++) {
          const target = i % 2 === 0 ? service : other
          const res = yield* request("/v1/account", { headers: own.headers() }, target)
          assert.strictEqual(res.status, 200)
          assert.strictEqual(res.headers.get("x-ratelimit-limit"), "60")
          assert.strictEqual(res.headers.get("x-ratelimit-remaining"), String(59 - i))
          assert.isAbove(Number(res.headers.get("x-ratelimit-reset")), Date.now() / 1000 - 5)
        }
        const limited = yield* request("/v1/account", { headers: own.headers() }, other)
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.headers.get("retry-after"), "1")
        assert.strictEqual(limited.headers.get("x-ratelimit-remaining"), "0")
        assert.strictEqual(yield* errorCode(limited), "rate_limited")
        // sessions are not rate limited
        assert.strictEqual((yield* request("/v1/account", { headers: own.headers("session") })).status, 200)
        clock.advance(1000)
        assert.strictEqual((yield* request("/v1/account", { headers: own.headers() })).status, 200)
        assert.strictEqual((yield* request("/v1/account", { headers: own.headers() })).status, 429)
      })
    )

    it.scoped(
      "stays exact when 100 requests race on two instances: 60 allowed, each remaining value once",
      () =>
        Effect.gen(function* () {
          const { service, clock } = yield* Fixture
          const own = yield* newMerchant
          const other = yield* anotherInstance()
          clock.freeze()
          // Concurrent requests on one instance share round trips; the shared bucket must still count every one.
          const answers = yield* Effect.all(
            Array.from({ length: 100 }, (_, i) =>
              request("/v1/account", { headers: own.headers() }, i % 2 === 0 ? service : other)
            ),
            { concurrency: "unbounded" }
          )
          const allowed = answers.filter((res) => res.status === 200)
          const limited = answers.filter((res) => res.status === 429)
          assert.lengthOf(allowed, 60)
          assert.lengthOf(limited, 40)
          const remaining = allowed.map((res) => Number(res.headers.get("x-ratelimit-remaining")))
          assert.deepStrictEqual(
            remaining.sort((a, b) => a - b),
            Array.from({ length: 60 }, (_, i) => i)
          )
          for (const res of limited) {
            assert.strictEqual(res.headers.get("x-ratelimit-remaining"), "0")
            assert.strictEqual(res.headers.get("retry-after"), "1")
          }
        })
    )
  })

  describe("CORS", () => {
    const preflight = (path: string, origin: string, method: string) =>
      request(path, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": method,
          "access-control-request-headers": "authorization"
        }
      })

    it.effect("allows only the dashboard origin on merchant routes (by default the service's own)", () =>
      Effect.gen(function* () {
        const { service } = yield* Fixture
        const own = new URL(service.baseUrl).origin
        const ok = yield* preflight("/v1/account", own, "GET")
        assert.strictEqual(ok.status, 204)
        assert.strictEqual(ok.headers.get("access-control-allow-origin"), own)
        assert.match(ok.headers.get("access-control-allow-headers") ?? "", /Authorization/)
        const no = yield* preflight("/v1/account", "https://evil.example", "GET")
        assert.isNull(no.headers.get("access-control-allow-origin"))
        // The API reference runs sandboxed, in an opaque origin: its merchant calls are answered, its payer writes not.
        const reference = yield* preflight("/v1/account", "null", "GET")
        assert.strictEqual(reference.headers.get("access-control-allow-origin"), "null")
        const referenceWrite = yield* preflight("/v1/payer/deposit-requests/dr_x/wallet", "null", "POST")
        assert.isNull(referenceWrite.headers.get("access-control-allow-origin"))
      })
    )

    it.effect("answers payer reads to any origin and payer writes only to the checkout origin", () =>
      Effect.gen(function* () {
        const { service } = yield* Fixture
        const read = yield* preflight("/v1/payer/deposit-requests/dr_x", "https://anyone.example", "GET")
        assert.strictEqual(read.headers.get("access-control-allow-origin"), "*")
        // The default checkout origin is the service's own (where the hosted checkout is served).
        const own = new URL(service.baseUrl).origin
        const write = yield* preflight("/v1/payer/deposit-requests/dr_x/wallet", own, "POST")
        assert.strictEqual(write.headers.get("access-control-allow-origin"), own)
        const stranger = yield* preflight(
          "/v1/payer/deposit-requests/dr_x/wallet",
          "https://anyone.example",
          "POST"
        )
        assert.isNull(stranger.headers.get("access-control-allow-origin"))
      })
    )

    it.effect("sets the origin on actual merchant answers", () =>
      Effect.gen(function* () {
        const { merchant, service } = yield* Fixture
        const own = new URL(service.baseUrl).origin
        const res = yield* request("/v1/account", { headers: merchant.headers("session", { origin: own }) })
        assert.strictEqual(res.headers.get("access-control-allow-origin"), own)
        assert.match(res.headers.get("access-control-expose-headers") ?? "", /X-Request-Id/)
      })
    )
  })

  describe("CLI", () => {
    it.effect("creates an account with a session and a working sandbox key in one command", () =>
      Effect.gen(function* () {
        const { db } = yield* Fixture
        const { stdout } = yield* Effect.promise(() =>
          promisify(execFile)("npx", ["tsx", "src/cli/main.ts", "sandbox", "--json"], {
            env: { ...process.env, DATABASE_URL: db.url }
          })
        )
        const out = JSON.parse(stdout) as { account_id: string; session_token: string; api_key: string }
        assert.match(out.account_id, /^acct_/)
        const res = yield* request("/v1/account", { headers: bearer(out.api_key) })
        assert.strictEqual(res.status, 200)
        assert.strictEqual((yield* json<{ id: string }>(res)).id, out.account_id)
      })
    )
  })

  describe("revocation across instances", () => {
    it.scoped("ends a key cached by another instance within moments, through the bus", () =>
      Effect.gen(function* () {
        const { db } = yield* Fixture
        const nats = { natsUrl: Option.some("nats://127.0.0.1:4222") }
        const a = yield* anotherInstance({ database: db, config: nats })
        const b = yield* anotherInstance({ database: db, config: nats })
        const own = yield* newMerchant
        // b has the key cached now
        assert.strictEqual((yield* request("/v1/account", { headers: own.headers() }, b)).status, 200)
        assert.strictEqual((yield* request("/v1/account", { headers: own.headers() }, b)).status, 200)
        const revoke = yield* request(
          "/v1/account/api-key",
          { method: "DELETE", headers: own.headers("session") },
          a
        )
        assert.strictEqual(revoke.status, 204)
        const started = Date.now()
        let status = 200
        while (status === 200 && Date.now() - started < 1000) {
          status = (yield* request("/v1/account", { headers: own.headers() }, b)).status
        }
        assert.strictEqual(status, 401)
        assert.isBelow(Date.now() - started, 250)
      })
    )
  })
})
