import { randomUUID } from "node:crypto"
import { decodedMail } from "../../support/SmtpInbox"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type pg from "pg"
import { eventually } from "../../support/eventually"
import { Inbox, mailingSandboxLayer } from "../../support/MailingSandbox"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { Sandbox, sandboxApply, sandboxCall } from "../../support/Sandbox"
import { scopedPgClient } from "../../support/scopedResources"

// Notices by email to the account's members (infra/decisions/0085-notices-by-email.md), against the whole service
// on the real PostgreSQL and NATS, mailing through a real SMTP inbox. Requests are paused through the actor host,
// as the treasury's token gate pauses them; a delivery series fails for good against a port nobody listens on.

const WINDOW_MS = 2_000

class Db extends Context.Tag("test/NoticesDb")<Db, pg.Client>() {}

const Live = Layer.scoped(
  Db,
  Effect.flatMap(Sandbox, ({ service }) => scopedPgClient(service.databaseUrl))
).pipe(
  Layer.provideMerge(
    sandboxWithReferences(
      mailingSandboxLayer({
        config: {
          natsUrl: Option.some("nats://127.0.0.1:4222"),
          webhooksAllowPrivate: true,
          webhookFirstRetryMs: 2,
          noticeBatchWindowMs: WINDOW_MS,
          rateLimitCapacity: 10_000
        }
      })
    )
  )
)

interface Answer<T> {
  readonly status: number
  readonly body: T & { error?: { code: string; message: string } }
}

const call = <T = Record<string, unknown>>(method: string, path: string, token: string, body?: unknown) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async (): Promise<Answer<T>> => {
      const res = await service.request(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as Answer<T>["body"] }
    })
  )

const mailsTo = (email: string) =>
  Effect.map(Inbox, (inbox) => inbox.filter((m) => m.to === email).map((m) => decodedMail(m.raw)))
const noticesTo = (email: string) =>
  Effect.map(mailsTo(email), (mails) => mails.filter((m) => m.includes("Subject: Notices for")))

const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

let addresses = 0
const newAddress = () => `n${++addresses}-${Date.now().toString(36)}@notices.example.com`

/** A member of the sandbox merchant's account (as an invitation accepted leaves one), signed in by a mailed code. */
const member = Effect.gen(function* () {
  const { merchant } = yield* Sandbox
  const db = yield* Db
  const email = newAddress()
  yield* Effect.promise(() =>
    db.query("insert into members (id, account_id, email, created_at) values ($1, $2, $3, now())", [
      randomUUID(),
      merchant.accountId.slice(5),
      email
    ])
  )
  const { service } = yield* Sandbox
  const sent = yield* Effect.promise(async () => {
    const res = await service.request("/v1/sign-in/email", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email })
    })
    return (await res.json()) as { binding: string }
  })
  assert.isTrue(
    yield* eventually(
      Effect.map(mailsTo(email), (m) => m.length > 0),
      5_000
    ),
    "the sign-in code arrived"
  )
  const code = /sign-in code is (\d{6})/.exec((yield* mailsTo(email))[0]!)?.[1] ?? assert.fail("no code")
  const token = yield* Effect.promise(async () => {
    const res = await service.request("/v1/sign-in/email/verify", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, code, binding: sent.binding })
    })
    assert.strictEqual(res.status, 201)
    return ((await res.json()) as { session_token: string }).session_token
  })
  return { email, token }
})

/** A request of the merchant paused with `code`, through the actor host as the token gate pauses one. */
const pausedRequest = (code: string) =>
  Effect.gen(function* () {
    const refs = yield* MerchantReferences
    const made = yield* sandboxCall<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "5.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    assert.strictEqual(made.status, 201)
    const id = made.body.id
    const at = () => new Date().toISOString()
    yield* sandboxApply(id, {
      type: "payer.wallet_attested",
      at: at(),
      wallet: "0x1111111111111111111111111111111111111111",
      address: `0x${id.slice(3).replaceAll("-", "").padEnd(40, "0")}`
    })
    yield* sandboxApply(id, {
      type: "attention.raised",
      at: at(),
      code,
      message: "USDC's issuer has blacklisted the payout address.",
      resolution: "Resume the request with another enabled payout address of the account (payout_address_id)."
    })
    const read = yield* sandboxCall<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
    assert.strictEqual(read.body.status, "needs_attention")
    return id
  })

layer(Live, { timeout: 120_000 })((it) => {
  describe("notices by email", () => {
    it.effect(
      "a burst of paused requests is one mail per member; a member who turned the kind off gets none",
      () =>
        Effect.gen(function* () {
          const alice = yield* member
          const bob = yield* member
          const off = yield* call<Record<string, boolean>>("PATCH", "/v1/account/member/notices", bob.token, {
            request_paused: false
          })
          assert.strictEqual(off.status, 200)
          assert.deepStrictEqual(off.body, {
            request_paused: false,
            endpoint_failing: true,
            return_held: true
          })

          const ids = [
            yield* pausedRequest("payout_address_blocked"),
            yield* pausedRequest("transfer_reverted"),
            yield* pausedRequest("payout_address_blocked")
          ]
          assert.isTrue(
            yield* eventually(
              Effect.map(noticesTo(alice.email), (m) => m.length > 0),
              20_000
            ),
            "alice's notice arrived"
          )
          // Another window and more: the burst stays one mail, and bob (kind off) is mailed nothing.
          yield* pause(WINDOW_MS * 2 + 1_000)
          const aliceMails = yield* noticesTo(alice.email)
          assert.lengthOf(aliceMails, 1)
          const mail = aliceMails[0]!
          assert.include(mail, "3 requests paused")
          for (const id of ids) assert.include(mail, `/dashboard/#/requests/${id}`)
          assert.include(mail, `${ids[1]} paused (transfer_reverted)`)
          assert.include(mail, "/dashboard/#/team")
          assert.notInclude(mail, "session_")
          assert.lengthOf(yield* noticesTo(bob.email), 0)
          // Queued once per cause, and marked sent.
          const db = yield* Db
          const rows = yield* Effect.promise(() =>
            db.query<{ n: number; unsent: number }>(
              `select count(*)::int as n, count(*) filter (where sent_at is null)::int as unsent from pending_notices
             where kind = 'request_paused' and subject_id = any($1::uuid[])`,
              [ids.map((id) => id.slice(3))]
            )
          )
          assert.deepStrictEqual(rows.rows[0], { n: 3, unsent: 0 })
        })
    )

    it.effect("a delivery series failed for good is mailed, with the endpoint's dashboard link", () =>
      Effect.gen(function* () {
        const carol = yield* member
        // Nothing listens on port 9 of loopback: every attempt is refused, 12 attempts from 2 ms on.
        const endpoint = yield* sandboxCall<{ id: string }>("POST", "/v1/webhooks", {
          url: "https://127.0.0.1:9/dead"
        })
        assert.strictEqual(endpoint.status, 201, JSON.stringify(endpoint.body))
        const test = yield* sandboxCall("POST", `/v1/webhooks/${endpoint.body.id}/test`)
        assert.strictEqual(test.status, 202, JSON.stringify(test.body))
        const arrived = yield* eventually(
          Effect.map(noticesTo(carol.email), (m) => m.some((text) => text.includes(endpoint.body.id))),
          40_000,
          200
        )
        assert.isTrue(arrived, "the endpoint's notice arrived")
        const mail = (yield* noticesTo(carol.email)).find((text) => text.includes(endpoint.body.id))!
        assert.include(mail, "failed for good after its last attempt")
        assert.include(mail, `/dashboard/#/webhooks/${endpoint.body.id}`)
        yield* sandboxCall("POST", `/v1/webhooks/${endpoint.body.id}/disable`)
      })
    )

    it.effect(
      "preferences: unknown kinds and non-booleans are 400, each member reads and changes only their own",
      () =>
        Effect.gen(function* () {
          const dave = yield* member
          const erin = yield* member
          const read = yield* call("GET", "/v1/account/member/notices", dave.token)
          assert.strictEqual(read.status, 200)
          assert.deepStrictEqual(read.body, {
            request_paused: true,
            endpoint_failing: true,
            return_held: true
          })
          const unknown = yield* call("PATCH", "/v1/account/member/notices", dave.token, {
            account_deleted: false
          })
          assert.strictEqual(unknown.status, 400)
          assert.strictEqual(unknown.body.error?.code, "invalid_request")
          const notBoolean = yield* call("PATCH", "/v1/account/member/notices", dave.token, {
            return_held: "no"
          })
          assert.strictEqual(notBoolean.status, 400)
          assert.strictEqual(notBoolean.body.error?.code, "invalid_request")
          // Nothing was written by the refused changes.
          assert.deepStrictEqual(
            (yield* call("GET", "/v1/account/member/notices", dave.token)).body,
            read.body
          )

          const changed = yield* call("PATCH", "/v1/account/member/notices", dave.token, {
            return_held: false,
            endpoint_failing: false
          })
          assert.deepStrictEqual(changed.body, {
            request_paused: true,
            endpoint_failing: false,
            return_held: false
          })
          const back = yield* call("PATCH", "/v1/account/member/notices", dave.token, {
            endpoint_failing: true
          })
          assert.deepStrictEqual(back.body, {
            request_paused: true,
            endpoint_failing: true,
            return_held: false
          })
          // Another member of the same account is untouched.
          assert.deepStrictEqual((yield* call("GET", "/v1/account/member/notices", erin.token)).body, {
            request_paused: true,
            endpoint_failing: true,
            return_held: true
          })
          // An API key may not, and the operator CLI's session belongs to no member.
          const { merchant } = yield* Sandbox
          const byKey = yield* call("GET", "/v1/account/member/notices", merchant.apiKey)
          assert.strictEqual(byKey.status, 401)
          assert.strictEqual(byKey.body.error?.code, "identity_unauthorized")
          const operator = yield* call("PATCH", "/v1/account/member/notices", merchant.sessionToken, {
            return_held: false
          })
          assert.strictEqual(operator.status, 404)
          assert.strictEqual(operator.body.error?.code, "member_not_found")
        })
    )

    it.effect(
      "an endpoint whose every attempt has failed for an hour is mailed once, as failing for an hour",
      () =>
        Effect.gen(function* () {
          const frank = yield* member
          const db = yield* Db
          const endpoint = yield* sandboxCall<{ id: string }>("POST", "/v1/webhooks", {
            url: "https://127.0.0.1:9/down-for-an-hour"
          })
          assert.strictEqual(endpoint.status, 201)
          const uuid = endpoint.body.id.slice(3)
          yield* sandboxCall("POST", `/v1/webhooks/${endpoint.body.id}/test`)
          const attempts = Effect.promise(async () => {
            const rows = await db.query<{ n: number }>(
              "select count(*)::int as n from webhook_deliveries where endpoint_id = $1",
              [uuid]
            )
            return rows.rows[0]!.n
          })
          assert.isTrue(
            yield* eventually(
              Effect.map(attempts, (n) => n >= 3),
              20_000,
              100
            )
          )
          // Its first failure moved an hour and a minute back: failing since then, the latest attempt recent.
          yield* Effect.promise(() =>
            db.query(
              `update webhook_deliveries set attempted_at = attempted_at - interval '61 minutes'
             where id = (select id from webhook_deliveries where endpoint_id = $1 order by attempted_at limit 1)`,
              [uuid]
            )
          )
          const hour = (mails: ReadonlyArray<string>) =>
            mails.filter((m) => m.includes(`${endpoint.body.id}: every delivery has failed for an hour`))
          assert.isTrue(
            yield* eventually(
              Effect.map(noticesTo(frank.email), (m) => hour(m).length > 0),
              30_000,
              200
            ),
            "the failing-for-an-hour notice arrived"
          )
          yield* sandboxCall("POST", `/v1/webhooks/${endpoint.body.id}/disable`)
          yield* pause(WINDOW_MS * 2 + 1_000)
          assert.lengthOf(hour(yield* noticesTo(frank.email)), 1)
          const queued = yield* Effect.promise(() =>
            db.query<{ n: number }>(
              "select count(*)::int as n from pending_notices where subject_id = $1 and code = 'failing_for_an_hour'",
              [uuid]
            )
          )
          assert.strictEqual(queued.rows[0]!.n, 1)
        })
    )

    it.effect("a held return is queued as return_held, once per hold", () =>
      Effect.gen(function* () {
        const id = yield* pausedRequest("payer_wallet_blocked")
        const db = yield* Db
        const hold = (commandId: string) =>
          Effect.promise(() =>
            db.query(
              `insert into held_transfers (command_id, deposit_request_id, topic, payload, code, reason, held_at)
               values ($1, $2, 'command.return', $3, 'payer_wallet_blocked', 'blacklisted', '2026-11-28T12:00:00Z')
               on conflict do nothing`,
              [commandId, id.slice(3), { type: "return", command_id: commandId }]
            )
          )
        yield* hold(`return:${id}:1`)
        yield* Effect.promise(() =>
          db.query("delete from held_transfers where command_id = $1", [`return:${id}:1`])
        )
        yield* hold(`return:${id}:1`)
        const rows = yield* Effect.promise(() =>
          db.query<{ kind: string; code: string }>(
            "select kind, code from pending_notices where subject_id = $1 order by id",
            [id.slice(3)]
          )
        )
        assert.deepStrictEqual(rows.rows, [
          { kind: "request_paused", code: "payer_wallet_blocked" },
          { kind: "return_held", code: "payer_wallet_blocked" }
        ])
      })
    )
  })
})
