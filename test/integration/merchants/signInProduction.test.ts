import { networkInterfaces } from "node:os"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { english, generateMnemonic } from "viem/accounts"
import pg from "pg"
import { eventually, pause } from "../../support/eventually"
import type { RunningService } from "../../support/Service"
import { onService, scopedService } from "../../support/scopedResources"
import { Accounts } from "../../../services/merchants/Accounts"
import { Members } from "../../../services/merchants/Members"
import { type ReceivedMail, startSmtpInbox } from "../../support/SmtpInbox"

// Sign-in in production: sign-up is off (an unknown address gets the same 202 and nothing is mailed), and the
// sign-in routes refuse plain HTTP from a client that is not on loopback. The service listens on every address;
// the machine's own non-loopback address stands for a client on the network.

class Production extends Context.Tag("test/Production")<
  Production,
  { readonly service: RunningService; readonly inbox: ReadonlyArray<ReceivedMail>; readonly port: number }
>() {}

const ProductionLive = Layer.scoped(
  Production,
  Effect.gen(function* () {
    const smtp = yield* Effect.acquireRelease(
      Effect.promise(() => startSmtpInbox()),
      (s) => Effect.promise(() => s.close())
    )
    const service = yield* scopedService({
      config: {
        serviceEnv: "production",
        host: "0.0.0.0",
        smtpUrl: Option.some(smtp.url),
        natsUrl: Option.some("nats://127.0.0.1:4222"),
        depositKeyMnemonic: Option.some(Redacted.make(generateMnemonic(english)))
      }
    })
    return { service, inbox: smtp.inbox, port: Number(new URL(service.baseUrl).port) }
  })
)

/** This machine's first non-loopback IPv4 address: to the service, a client on the network. */
const networkAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address

const post = (
  path: string,
  body: unknown,
  options: { host?: string; headers?: Record<string, string> } = {}
) =>
  Effect.flatMap(Production, ({ port }) =>
    Effect.promise(async () => {
      const res = await fetch(`http://${options.host ?? "127.0.0.1"}:${port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...options.headers },
        body: JSON.stringify(body)
      })
      return {
        status: res.status,
        body: (await res.json()) as { error?: { code: string }; member?: unknown }
      }
    })
  )

const attempts = (email: string) =>
  Effect.flatMap(Production, ({ service }) =>
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: service.databaseUrl })
      await client.connect()
      try {
        return (
          await client.query<{ kind: string; outcome: string }>(
            "select kind, outcome from sign_in_attempts where email = $1 order by at, id",
            [email]
          )
        ).rows.map((r) => `${r.kind} ${r.outcome}`)
      } finally {
        await client.end()
      }
    })
  )

layer(ProductionLive, { timeout: 120_000 })((it) => {
  describe("sign-in in production", () => {
    it.effect("answers an unknown address like any other, mails nothing, and refuses every code", () =>
      Effect.gen(function* () {
        const { inbox } = yield* Production
        const email = "stranger@unknown.example.com"
        const sent = yield* post("/v1/sign-in/email", { email })
        assert.strictEqual(sent.status, 202)
        yield* pause(300)
        assert.strictEqual(inbox.filter((m) => m.to === email).length, 0)
        for (const code of ["000000", "123456", "999999"]) {
          const res = yield* post("/v1/sign-in/email/verify", { email, code, binding: "bind_x" })
          assert.strictEqual(res.status, 400)
          assert.strictEqual(res.body.error?.code, "invalid_request")
        }
        assert.deepStrictEqual(yield* attempts(email), [
          "email_send refused: no member with this address",
          "email_code refused: wrong, used or expired code",
          "email_code refused: wrong, used or expired code",
          "email_code refused: wrong, used or expired code"
        ])
      })
    )

    it.effect("refuses plain HTTP from a client on the network, whatever X-Forwarded-Proto claims", () =>
      Effect.gen(function* () {
        assert.isDefined(networkAddress, "the machine has a non-loopback address")
        const host = networkAddress!
        for (const headers of [{}, { "x-forwarded-proto": "https", "x-forwarded-for": "127.0.0.1" }]) {
          const res = yield* post("/v1/sign-in/email", { email: "ada@shop.example.com" }, { host, headers })
          assert.strictEqual(res.status, 403)
          assert.strictEqual(res.body.error?.code, "https_required")
          const link = yield* post("/v1/sign-in/link", { token: "signin_x" }, { host, headers })
          assert.strictEqual(link.status, 403)
        }
        // Nothing was recorded for them: they never reached a sign-in.
        assert.deepStrictEqual(yield* attempts("ada@shop.example.com"), [])
        // A proxy on loopback that says the client came over plain HTTP is refused too; over HTTPS it passes.
        const proxied = (proto: string) =>
          post(
            "/v1/sign-in/email",
            { email: "ada@shop.example.com" },
            { headers: { "x-forwarded-proto": proto, "x-forwarded-for": "203.0.113.9" } }
          )
        assert.strictEqual((yield* proxied("http")).status, 403)
        assert.strictEqual((yield* proxied("https")).status, 202)
        // Loopback itself is not a network.
        assert.strictEqual((yield* post("/v1/sign-in/email", { email: "ada@shop.example.com" })).status, 202)
      })
    )

    it.effect("an invited address signs in by code; sign-up stays off", () =>
      Effect.gen(function* () {
        const { inbox } = yield* Production
        // The operator's invitation (as the CLI makes it) through the service's own Members.
        const { service } = yield* Production
        const email = "owner@live.example.com"
        const token = yield* onService(
          service,
          Effect.gen(function* () {
            const account = yield* (yield* Accounts).create("Live shop")
            const created = yield* Effect.orDie((yield* Members).invite(account.id, email, null))
            return created.link.split("#invite=")[1]!
          })
        )
        assert.match(token, /^invite_/)
        const accepted = yield* post("/v1/sign-in/invite", { token, confirmed: true })
        assert.strictEqual(accepted.status, 201)
        const arrived = yield* eventually(
          Effect.sync(() => inbox.some((m) => m.to === email)),
          5_000
        )
        assert.isTrue(arrived)
        const sent = yield* post("/v1/sign-in/email", { email })
        assert.strictEqual(sent.status, 202)
        const { binding } = sent.body as unknown as { binding: string }
        const mailed = yield* eventually(
          Effect.sync(() => inbox.filter((m) => m.to === email).length === 2),
          5_000
        )
        assert.isTrue(mailed)
        const code = /sign-in code is (\d{6})/.exec(inbox.filter((m) => m.to === email)[1]!.raw)?.[1]
        const res = yield* post("/v1/sign-in/email/verify", { email, code, binding })
        assert.strictEqual(res.status, 201)
      })
    )
  })
})
