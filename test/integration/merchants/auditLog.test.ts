import { decodedMail } from "../../support/SmtpInbox"
import { assert, describe, layer } from "@effect/vitest"
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import pg from "pg"
import { AuditLog } from "../../../services/merchants/AuditLog"
import { DatabaseLive } from "../../../services/platform/Database"
import { settingsLayer } from "../../../src/app/Config"
import { eventually } from "../../support/eventually"
import { Inbox, mailingSandboxLayer } from "../../support/MailingSandbox"
import { Sandbox } from "../../support/Sandbox"
import { SoftwareAuthenticator } from "../../support/SoftwareAuthenticator"

// The audit log and the security notices (infra/decisions/0076-audit-log-and-security-notices.md), against the
// whole service on the real PostgreSQL and NATS, mailing through a real SMTP inbox. Each member acts from a client
// address and browser of their own (X-Forwarded-For, believed from a loopback peer), each change with a request id.

const Live = mailingSandboxLayer({
  config: {
    natsUrl: Option.some("nats://127.0.0.1:4222"),
    webhooksAllowPrivate: true,
    // A new payout address is held (as in production), so a member can cancel one during its hold.
    payoutAddressHoldSeconds: Option.some(3_600)
  }
})

interface Answer<T> {
  readonly status: number
  readonly body: T & { error?: { code: string; message: string } }
}
interface SignedIn {
  session_token: string
  member: { id: string; email: string }
  account: { id: string; name: string }
}
interface Entry {
  id: string
  action: string
  actor: { type: string; id: string | null; label: string }
  target_id: string | null
  created_at: string
  client: { address: string; user_agent: string | null; request_id: string | null }
}

/** Who is calling: a credential and the client it calls from. */
interface Caller {
  readonly token: string
  readonly client: string
  readonly userAgent: string
}

let requests = 0
const call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  options: { body?: unknown; as?: Caller; client?: string; requestId?: string } = {}
) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async (): Promise<Answer<T>> => {
      const client = options.as?.client ?? options.client
      const res = await service.request(path, {
        method,
        headers: {
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
          ...(client === undefined ? {} : { "x-forwarded-for": client }),
          ...(options.as === undefined
            ? {}
            : { authorization: `Bearer ${options.as.token}`, "user-agent": options.as.userAgent }),
          "x-request-id": options.requestId ?? `req-${++requests}`
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
      })
      const text = await res.text()
      return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as Answer<T>["body"] }
    })
  )

const mailsTo = (email: string) =>
  Effect.map(Inbox, (inbox) => inbox.filter((m) => m.to === email).map((m) => decodedMail(m.raw)))

const nthMail = (email: string, n: number) =>
  Effect.gen(function* () {
    const arrived = yield* eventually(
      Effect.map(mailsTo(email), (mails) => mails.length >= n),
      5_000
    )
    assert.isTrue(arrived, `mail ${n} to ${email} arrived`)
    return (yield* mailsTo(email))[n - 1]!
  })

let clients = 0
const newClient = () => `203.0.113.${++clients}`
let addresses = 0
const newAddress = () => `a${++addresses}-${Date.now().toString(36)}@audit.example.com`

/** Signs up by the mailed code, from a client and browser of its own. */
const signUp = (email: string) =>
  Effect.gen(function* () {
    const client = newClient()
    const sent = yield* call<{ binding: string }>("POST", "/v1/sign-in/email", { body: { email }, client })
    assert.strictEqual(sent.status, 202)
    const code = /sign-in code is (\d{6})/.exec(yield* nthMail(email, 1))?.[1] ?? assert.fail("no code")
    const res = yield* call<SignedIn>("POST", "/v1/sign-in/email/verify", {
      body: { email, code, binding: sent.body.binding },
      client
    })
    assert.strictEqual(res.status, 201, JSON.stringify(res.body))
    return {
      signedIn: res.body,
      caller: { token: res.body.session_token, client, userAgent: `Browser of ${email}` }
    }
  })

/** `inviter` invites a new address, which accepts from a client of its own. */
const join = (inviter: Caller, requestId: string) =>
  Effect.gen(function* () {
    const email = newAddress()
    const invited = yield* call<{ id: string }>("POST", "/v1/account/invites", {
      body: { email },
      as: inviter,
      requestId
    })
    assert.strictEqual(invited.status, 201)
    const token =
      /#invite=(invite_[A-Za-z0-9_-]+)/.exec(yield* nthMail(email, 1))?.[1] ?? assert.fail("no link")
    const client = newClient()
    const res = yield* call<SignedIn>("POST", "/v1/sign-in/invite", {
      body: { token, confirmed: true },
      client,
      requestId: `${requestId}-accepted`
    })
    assert.strictEqual(res.status, 201, JSON.stringify(res.body))
    return {
      inviteId: invited.body.id,
      signedIn: res.body,
      caller: { token: res.body.session_token, client, userAgent: "" }
    }
  })

/** Every page of the audit log, `limit` at a time, as `reader` reads it. */
const wholeLog = (reader: Caller, limit: number) =>
  Effect.gen(function* () {
    const entries: Array<Entry> = []
    let after: string | null = null
    let pages = 0
    do {
      const query: string = after === null ? `?limit=${limit}` : `?limit=${limit}&starting_after=${after}`
      const page: Answer<{ entries: Array<Entry>; next_cursor: string | null }> = yield* call<{
        entries: Array<Entry>
        next_cursor: string | null
      }>("GET", `/v1/account/audit-log${query}`, { as: reader })
      assert.strictEqual(page.status, 200, JSON.stringify(page.body))
      assert.isAtMost(page.body.entries.length, limit)
      entries.push(...page.body.entries)
      after = page.body.next_cursor
      pages += 1
    } while (after !== null)
    return { entries, pages }
  })

const sql = <T>(text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.tryPromise({
      try: async () => {
        const client = new pg.Client({ connectionString: service.databaseUrl })
        await client.connect()
        try {
          return (await client.query(text, values as Array<unknown>)).rows as Array<T>
        } finally {
          await client.end()
        }
      },
      catch: (e) => (e instanceof Error ? e.message : String(e))
    })
  )

/** Until a mail to `to` says `actor what` and links to `undo`. */
const notice = (to: string, actor: string, what: string, undo: string) =>
  Effect.gen(function* () {
    const found = yield* eventually(
      Effect.map(mailsTo(to), (mails) =>
        mails.some((m) => m.includes(`${actor} ${what}`) && m.includes(undo))
      ),
      5_000
    )
    assert.isTrue(found, `${to} was told that ${actor} ${what}`)
  })

/** Entries for the test's own changes to an account, oldest first. */
const scenario = Effect.gen(function* () {
  const owner = yield* signUp(newAddress())
  const ownerCaller = { ...owner.caller, userAgent: "Owner's browser/1.0" }
  const second = yield* join(ownerCaller, "req-invite-second")
  const other = { ...second.caller, userAgent: "Second member's browser/2.0" }
  const key = yield* call<{ api_key: string; last4: string }>("POST", "/v1/account/api-key", {
    as: ownerCaller,
    requestId: "req-key-created"
  })
  assert.strictEqual(key.status, 201)
  const rotated = yield* call<{ api_key: string; last4: string }>("POST", "/v1/account/api-key", {
    as: other,
    requestId: "req-key-rotated"
  })
  assert.strictEqual(rotated.status, 201)
  const apiKey = { token: rotated.body.api_key, client: newClient(), userAgent: "integration/3.0" }
  const payout = yield* call<{ id: string }>("POST", "/v1/payout-addresses", {
    body: { address: "0x8ba1f109551bd432803012645ac136ddd64dba72" },
    as: apiKey,
    requestId: "req-payout-created"
  })
  assert.strictEqual(payout.status, 201)
  const disabled = yield* call("POST", `/v1/payout-addresses/${payout.body.id}/disable`, {
    as: other,
    requestId: "req-payout-disabled"
  })
  assert.strictEqual(disabled.status, 200)
  const webhook = yield* call<{ id: string }>("POST", "/v1/webhooks", {
    body: { url: "http://127.0.0.1:9/audit" },
    as: apiKey,
    requestId: "req-webhook-created"
  })
  assert.strictEqual(webhook.status, 201, JSON.stringify(webhook.body))
  const third = yield* join(other, "req-invite-third")
  const removed = yield* call("DELETE", `/v1/account/members/${third.signedIn.member.id}`, {
    as: ownerCaller,
    requestId: "req-member-removed"
  })
  assert.strictEqual(removed.status, 204)
  return { owner, ownerCaller, second, other, third, key, rotated, apiKey, payout, webhook }
})

layer(Live, { timeout: 120_000 })((it) => {
  describe("audit log", () => {
    it.effect(
      "lists each change of two members and a key with actor, client and request id, newest first",
      () =>
        Effect.gen(function* () {
          const s = yield* scenario
          const { entries, pages } = yield* wholeLog(s.ownerCaller, 3)
          assert.isAbove(pages, 2)
          const seen = entries.map(
            (e) => `${e.action} ${e.actor.type}:${e.actor.label} ${e.client.request_id}`
          )
          const owner = s.owner.signedIn.member.email
          const second = s.second.signedIn.member.email
          const third = s.third.signedIn.member.email
          const key = `API key …${s.rotated.body.last4}`
          assert.deepStrictEqual(seen, [
            `member.removed member:${owner} req-member-removed`,
            `member.joined member:${third} req-invite-third-accepted`,
            `member.invited member:${second} req-invite-third`,
            `webhook_endpoint.created api_key:${key} req-webhook-created`,
            `payout_address.disabled member:${second} req-payout-disabled`,
            `payout_address.created api_key:${key} req-payout-created`,
            `api_key.rotated member:${second} req-key-rotated`,
            `api_key.created member:${owner} req-key-created`,
            `member.joined member:${second} req-invite-second-accepted`,
            `member.invited member:${owner} req-invite-second`
          ])
          const byRequest = new Map(entries.map((e) => [e.client.request_id, e]))
          const created = byRequest.get("req-payout-created")!
          assert.strictEqual(created.target_id, s.payout.body.id)
          assert.strictEqual(created.actor.id, s.rotated.body.last4)
          assert.strictEqual(created.client.address, s.apiKey.client)
          assert.strictEqual(created.client.user_agent, "integration/3.0")
          const disabled = byRequest.get("req-payout-disabled")!
          assert.strictEqual(disabled.actor.id, s.second.signedIn.member.id)
          assert.strictEqual(disabled.client.address, s.other.client)
          assert.strictEqual(disabled.client.user_agent, "Second member's browser/2.0")
          assert.strictEqual(byRequest.get("req-webhook-created")!.target_id, s.webhook.body.id)
          assert.strictEqual(byRequest.get("req-member-removed")!.target_id, s.third.signedIn.member.id)
          assert.strictEqual(byRequest.get("req-key-created")!.client.user_agent, "Owner's browser/1.0")
          assert.strictEqual(
            byRequest.get("req-invite-third-accepted")!.client.address,
            s.third.caller.client
          )
          assert.match(entries[0]!.id, /^aud_/)
          for (let i = 1; i < entries.length; i++)
            assert.isTrue(entries[i - 1]!.created_at >= entries[i]!.created_at, "newest first")
          // The other member reads the same log; an API key is refused, as on every route for the account's people.
          assert.strictEqual((yield* wholeLog(s.other, 100)).entries.length, entries.length)
          const byKey = yield* call<Record<string, never>>("GET", "/v1/account/audit-log", { as: s.apiKey })
          assert.strictEqual(byKey.status, 401)
          assert.strictEqual(byKey.body.error?.code, "identity_unauthorized")
          const malformed = yield* call("GET", "/v1/account/audit-log?starting_after=pa_1", {
            as: s.ownerCaller
          })
          assert.strictEqual(malformed.status, 400)
        })
    )

    it.effect(
      "refuses UPDATE and DELETE of its rows; the sweep deletes only entries past the retention",
      () =>
        Effect.gen(function* () {
          const s = yield* scenario
          const account = s.owner.signedIn.account.id.slice("acct_".length)
          const update = yield* Effect.flip(
            sql("update audit_log set action = 'api_key.revoked' where account_id = $1", [account])
          )
          assert.include(update, "append-only")
          const remove = yield* Effect.flip(sql("delete from audit_log where account_id = $1", [account]))
          assert.include(remove, "append-only")
          const rows = yield* sql<{ n: string }>(
            "select count(*) as n from audit_log where account_id = $1",
            [account]
          )
          assert.strictEqual(Number(rows[0]!.n), 10)
          // Two entries written 401 and 399 days ago (an insert is the one change the log takes).
          const day = 86_400_000
          for (const [id, age] of [
            ["0190f5c2-7d4e-7a31-9b6c-000000000401", 401],
            ["0190f5c2-7d4e-7a31-9b6c-000000000399", 399]
          ] as const) {
            yield* sql(
              `insert into audit_log (id, account_id, actor_kind, actor_id, actor_label, action, target_id, at, client)
             values ($1, $2, 'operator', null, 'The operator''s CLI', 'api_key.created', null, $3, '127.0.0.1')`,
              [id, account, new Date(Date.now() - age * day)]
            )
          }
          const { service } = yield* Sandbox
          const runtime = ManagedRuntime.make(
            AuditLog.Default.pipe(
              Layer.provideMerge(DatabaseLive),
              Layer.provide(settingsLayer({ databaseUrl: Option.some(Redacted.make(service.databaseUrl)) }))
            )
          )
          const deleted = yield* Effect.promise(() =>
            runtime.runPromise(Effect.flatMap(AuditLog, (log) => log.sweep()))
          )
          yield* Effect.promise(() => runtime.dispose())
          assert.strictEqual(deleted, 1)
          const left = yield* sql<{ id: string }>(
            "select id from audit_log where account_id = $1 and at < now() - interval '300 days'",
            [account]
          )
          assert.deepStrictEqual(
            left.map((r) => r.id),
            ["0190f5c2-7d4e-7a31-9b6c-000000000399"]
          )
        })
    )
  })

  describe("security notices", () => {
    it.effect("mails every member each notice, naming who did it, from where, and where to undo it", () =>
      Effect.gen(function* () {
        const s = yield* scenario
        const owner = s.owner.signedIn.member.email
        const second = s.second.signedIn.member.email
        const third = s.third.signedIn.member.email
        const key = `API key …${s.rotated.body.last4}`
        const { service } = yield* Sandbox
        // Once both were members, both are told of every change; the second member's invitation reached the owner.
        yield* notice(owner, owner, "invited a new member", `${service.baseUrl}/dashboard/#/team`)
        yield* notice(owner, second, "joined the account", "/dashboard/#/team")
        for (const to of [owner, second]) {
          yield* notice(to, owner, "created an API key", "/dashboard/#/developers")
          yield* notice(to, second, "rotated the API key", "/dashboard/#/developers")
          yield* notice(to, key, "added a payout address", "/dashboard/#/payout-addresses")
          yield* notice(to, second, "disabled a payout address", "/dashboard/#/payout-addresses")
          yield* notice(to, key, "added a webhook endpoint", `/dashboard/#/webhooks/${s.webhook.body.id}`)
          yield* notice(to, second, "invited a new member", "/dashboard/#/team")
          yield* notice(to, owner, "removed a member", "/dashboard/#/team")
        }
        // The third member's join is news to the others only, and their removal reaches the members left.
        yield* notice(second, third, "joined the account", "/dashboard/#/team")
        const toThird = yield* mailsTo(third)
        assert.strictEqual(toThird.length, 1, "the invitation alone")
        const toSecond = yield* mailsTo(second)
        assert.isFalse(toSecond.some((m) => m.includes(`${second} joined the account`)))
        const rotation = (yield* mailsTo(owner)).find((m) => m.includes(`${second} rotated the API key`))!
        assert.include(rotation, `From: ${s.other.client} (Second member's browser/2.0)`)
        assert.include(rotation, "Request: req-key-rotated")
        assert.match(rotation, /When: \d{4}-\d\d-\d\dT/)
      })
    )

    it.effect(
      "mails a passkey added, the keys revoked and a payout address cancelled in its hold to every member",
      () =>
        Effect.gen(function* () {
          const { service } = yield* Sandbox
          const owner = yield* signUp(newAddress())
          const ownerCaller = { ...owner.caller, userAgent: "Owner's browser/1.0" }
          const second = yield* join(ownerCaller, "req-notices-invite")
          const other = { ...second.caller, userAgent: "Second member's browser/2.0" }

          // The second member adds a passkey (a software authenticator on the service's own origin).
          const authenticator = new SoftwareAuthenticator(service.baseUrl)
          const started = yield* call<{
            challenge_id: string
            options: PublicKeyCredentialCreationOptionsJSON
          }>("POST", "/v1/account/passkeys/options", { body: {}, as: other })
          assert.strictEqual(started.status, 200, JSON.stringify(started.body))
          const passkey = yield* call("POST", "/v1/account/passkeys", {
            body: {
              challenge_id: started.body.challenge_id,
              name: "Work laptop",
              response: authenticator.register(started.body.options)
            },
            as: other
          })
          assert.strictEqual(passkey.status, 201, JSON.stringify(passkey.body))
          // The owner makes a key; the second member revokes it.
          const key = yield* call("POST", "/v1/account/api-key", { as: ownerCaller })
          assert.strictEqual(key.status, 201)
          const revoked = yield* call("DELETE", "/v1/account/api-key", { as: other })
          assert.strictEqual(revoked.status, 204, JSON.stringify(revoked.body))
          // The owner adds a payout address, held for an hour; the second member cancels it during the hold.
          const payout = yield* call<{ id: string; held_until: string | null }>(
            "POST",
            "/v1/payout-addresses",
            {
              body: { address: "0x7a250d5630b4cf539739df2c5dacb4c659f2488d" },
              as: ownerCaller
            }
          )
          assert.strictEqual(payout.status, 201)
          assert.isNotNull(payout.body.held_until)
          const cancelled = yield* call("POST", `/v1/payout-addresses/${payout.body.id}/cancel`, {
            as: other
          })
          assert.strictEqual(cancelled.status, 200, JSON.stringify(cancelled.body))

          const ownerEmail = owner.signedIn.member.email
          const secondEmail = second.signedIn.member.email
          for (const to of [ownerEmail, secondEmail]) {
            yield* notice(to, secondEmail, "added a passkey to their sign-in", "/dashboard/#/team")
            yield* notice(to, secondEmail, "revoked every API key", "/dashboard/#/developers")
            yield* notice(
              to,
              secondEmail,
              "cancelled a new payout address during its hold",
              "/dashboard/#/payout-addresses"
            )
            // The new address's notice says when it is released and how to cancel it meanwhile.
            yield* notice(
              to,
              ownerEmail,
              "added a payout address",
              `POST /v1/payout-addresses/${payout.body.id}/cancel`
            )
          }
          const cancelMail = (yield* mailsTo(ownerEmail)).find((m) => m.includes("during its hold"))!
          assert.include(cancelMail, `From: ${other.client} (Second member's browser/2.0)`)
        })
    )
  })
})
