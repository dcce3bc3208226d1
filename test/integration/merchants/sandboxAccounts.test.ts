import { networkInterfaces } from "node:os"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { english, generateMnemonic } from "viem/accounts"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { rawRequest } from "../../support/RawHttp"
import type { RunningService } from "../../support/Service"
import { scopedPgClient, scopedService } from "../../support/scopedResources"

// Issue 48, item 7 (decision 0087): the sandbox's sign-in offers the accounts already made, with a one-click way
// in; only to a page on the machine the sandbox runs on, and never in production (the routes do not exist there).

class Services extends Context.Tag("test/Services")<
  Services,
  {
    readonly sandbox: RunningService
    readonly production: RunningService
    readonly port: number
    readonly made: Merchant
    readonly invited: Merchant
  }
>() {}

const ServicesLive = Layer.scoped(
  Services,
  Effect.gen(function* () {
    // On every address: the machine's own network address stands for a client elsewhere on the network.
    const sandbox = yield* scopedService({ config: { host: "0.0.0.0" } })
    const production = yield* scopedService({
      config: {
        serviceEnv: "production",
        natsUrl: Option.some("nats://127.0.0.1:4222"),
        depositKeyMnemonic: Option.some(Redacted.make(generateMnemonic(english)))
      }
    })
    const made = yield* Effect.promise(() => createMerchant(sandbox.databaseUrl))
    const invited = yield* Effect.promise(() => createMerchant(sandbox.databaseUrl))
    const pg = yield* scopedPgClient(sandbox.databaseUrl)
    yield* Effect.promise(() =>
      pg.query(
        "insert into members (id, account_id, email, created_at) values (gen_random_uuid(), $1, $2, now())",
        [invited.accountId.slice("acct_".length), "owner@shop.example.com"]
      )
    )
    return { sandbox, production, port: Number(new URL(sandbox.baseUrl).port), made, invited }
  })
)

const networkAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address

type Listed = {
  accounts?: Array<{ id: string; name: string; created_at: string; member_emails: Array<string> }>
  session_token?: string
  dashboard_url?: string
  error?: { code: string; doc_url?: string }
}

const call = (base: string, method: "GET" | "POST", path: string, body?: unknown, headers = {}) =>
  Effect.promise(async () => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: res.status, headers: res.headers, body: (await res.json()) as Listed }
  })

layer(ServicesLive, { timeout: 120_000 })((it) => {
  describe("the sandbox sign-in's accounts", () => {
    it.effect("lists the accounts made, with their members' addresses, to this machine", () =>
      Effect.gen(function* () {
        const { sandbox, made, invited } = yield* Services
        const listed = yield* call(sandbox.baseUrl, "GET", "/dashboard/sandbox/accounts")
        assert.strictEqual(listed.status, 200)
        // The dashboard's own page only: no CORS grant to any other origin.
        assert.isNull(listed.headers.get("access-control-allow-origin"))
        const byId = new Map((listed.body.accounts ?? []).map((a) => [a.id, a]))
        assert.deepStrictEqual(byId.get(made.accountId)?.member_emails, [])
        assert.deepStrictEqual(byId.get(invited.accountId)?.member_emails, ["owner@shop.example.com"])
        assert.strictEqual(byId.get(made.accountId)?.name, "Test merchant")
      })
    )

    it.effect("signs into the account chosen with a session the dashboard link carries", () =>
      Effect.gen(function* () {
        const { sandbox, invited } = yield* Services
        const signed = yield* call(sandbox.baseUrl, "POST", "/dashboard/sandbox/sign-in", {
          account_id: invited.accountId
        })
        assert.strictEqual(signed.status, 200)
        const token = signed.body.session_token ?? ""
        assert.match(token, /^session_/)
        assert.strictEqual(signed.body.dashboard_url, `/dashboard/#session=${encodeURIComponent(token)}`)
        const account = yield* Effect.promise(async () => {
          const res = await fetch(`${sandbox.baseUrl}/v1/account`, {
            headers: { authorization: `Bearer ${token}` }
          })
          return { status: res.status, body: (await res.json()) as { id: string } }
        })
        assert.strictEqual(account.status, 200)
        assert.strictEqual(account.body.id, invited.accountId)
        const unknown = yield* call(sandbox.baseUrl, "POST", "/dashboard/sandbox/sign-in", {
          account_id: "acct_00000000-0000-0000-0000-000000000000"
        })
        assert.strictEqual(unknown.status, 404)
        assert.isUndefined(unknown.body.session_token)
      })
    )

    it.effect("does not exist for a client elsewhere, another page's call or another host name", () =>
      Effect.gen(function* () {
        const { sandbox, port, made } = yield* Services
        assert.isDefined(networkAddress, "the machine has a non-loopback address")
        const refusals = [
          yield* call(`http://${networkAddress}:${port}`, "GET", "/dashboard/sandbox/accounts"),
          yield* call(`http://${networkAddress}:${port}`, "POST", "/dashboard/sandbox/sign-in", {
            account_id: made.accountId
          }),
          // Behind a proxy on this machine, the forwarded client is the one that counts.
          yield* call(sandbox.baseUrl, "GET", "/dashboard/sandbox/accounts", undefined, {
            "x-forwarded-for": networkAddress
          }),
          yield* call(
            sandbox.baseUrl,
            "POST",
            "/dashboard/sandbox/sign-in",
            { account_id: made.accountId },
            {
              origin: "https://evil.example"
            }
          ),
          yield* call(sandbox.baseUrl, "GET", "/dashboard/sandbox/accounts", undefined, {
            origin: "null"
          }),
          // A name rebound to 127.0.0.1 by another site is not this service's (fetch will not send another Host).
          yield* Effect.promise(async () => {
            const answer = await rawRequest(sandbox.baseUrl, {
              method: "GET",
              path: "/dashboard/sandbox/accounts",
              headers: { host: `rebound.example:${port}` }
            })
            return { status: answer.status, headers: new Headers(), body: (answer.json ?? {}) as Listed }
          })
        ]
        for (const [i, refused] of refusals.entries()) {
          assert.strictEqual(refused.status, 404, `refusal ${i}`)
          assert.strictEqual(refused.body.error?.code, "route_not_found")
          assert.isUndefined(refused.body.accounts)
          assert.isUndefined(refused.body.session_token)
        }
      })
    )

    it.effect("is absent in production: both routes answer 404", () =>
      Effect.gen(function* () {
        const { production } = yield* Services
        const listed = yield* call(production.baseUrl, "GET", "/dashboard/sandbox/accounts")
        assert.strictEqual(listed.status, 404)
        assert.strictEqual(listed.body.error?.code, "route_not_found")
        const signed = yield* call(production.baseUrl, "POST", "/dashboard/sandbox/sign-in", {
          account_id: "acct_00000000-0000-0000-0000-000000000000"
        })
        assert.strictEqual(signed.status, 404)
        assert.isUndefined(signed.body.session_token)
      })
    )
  })
})
