import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import pg from "pg"
import { eventually, pause } from "../../support/eventually"
import { Inbox, mailingSandboxLayer } from "../../support/MailingSandbox"
import { ControlledClock } from "../../support/ControlledClock"
import { Sandbox } from "../../support/Sandbox"
import { startSmtpInbox } from "../../support/SmtpInbox"
import { createMerchant } from "../../support/Merchant"
import { scopedService } from "../../support/scopedResources"
import type { HttpTarget } from "../../support/Service"

// Sign-in by email (code and link), sign-up in the sandbox, invitations, members and sessions, against the whole
// service on the real PostgreSQL and NATS, mailing through a real SMTP inbox. Each test signs in from a client
// address of its own (X-Forwarded-For, believed from a loopback peer), so the per-client limit counts it alone.

const run = promisify(execFile)
const clock = new ControlledClock()
const NATS = { natsUrl: Option.some("nats://127.0.0.1:4222") }
const Live = mailingSandboxLayer({ clock, config: NATS })

interface Answer<T = Record<string, unknown>> {
  readonly status: number
  readonly body: T & { error?: { code: string; message: string; param?: string } }
  readonly headers: Headers
}
interface SignedIn {
  session_token: string
  expires_at: string
  member: { id: string; email: string; created_at: string; passkeys: number }
  account: { id: string; name: string; environment: string }
}

const call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  options: {
    body?: unknown
    client?: string
    token?: string
    on?: HttpTarget
    headers?: Record<string, string>
  } = {}
) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async (): Promise<Answer<T>> => {
      const res = await (options.on ?? service).request(path, {
        method,
        headers: {
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
          ...(options.client === undefined ? {} : { "x-forwarded-for": options.client }),
          ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
          ...options.headers
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
      })
      const text = await res.text()
      return {
        status: res.status,
        body: (text === "" ? {} : JSON.parse(text)) as Answer<T>["body"],
        headers: res.headers
      }
    })
  )

/** Quoted-printable undone, so a long link reads whole. */
const decoded = (raw: string) =>
  raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))

const mailsTo = (email: string) =>
  Effect.map(Inbox, (inbox) => inbox.filter((m) => m.to === email).map((m) => decoded(m.raw)))

/** The n-th mail to `email` (1-based), once it has arrived. */
const nthMail = (email: string, n: number) =>
  Effect.gen(function* () {
    const arrived = yield* eventually(
      Effect.map(mailsTo(email), (mails) => mails.length >= n),
      5_000
    )
    assert.isTrue(arrived, `mail ${n} to ${email} arrived`)
    return (yield* mailsTo(email))[n - 1]!
  })

const codeIn = (mail: string) =>
  /sign-in code is (\d{6})/.exec(mail)?.[1] ?? assert.fail("no code in the mail")
const linkTokenIn = (mail: string) =>
  /#sign-in=(signin_[A-Za-z0-9_-]+)/.exec(mail)?.[1] ?? assert.fail("no link")
const inviteTokenIn = (mail: string) =>
  /#invite=(invite_[A-Za-z0-9_-]+)/.exec(mail)?.[1] ?? assert.fail("no link")

let clients = 0
/** A client address of the test's own. */
const newClient = () => `198.51.100.${++clients}`
let addresses = 0
const newAddress = (domain = "shop.example.com") => `m${++addresses}-${Date.now().toString(36)}@${domain}`

/** The binding each address's latest start answered, as the asking browser keeps it. */
const bindings = new Map<string, string>()

/** Asks for a code and reads the mail it sent (the `n`-th to the address); keeps the answer's binding. */
const mailedTo = (email: string, client: string, n = 1) =>
  Effect.gen(function* () {
    const sent = yield* call<{ sent_to: string; expires_at: string; binding: string }>(
      "POST",
      "/v1/sign-in/email",
      { body: { email }, client }
    )
    assert.strictEqual(sent.status, 202)
    assert.match(sent.body.binding, /^bind_/)
    bindings.set(email, sent.body.binding)
    return yield* nthMail(email, n)
  })

/** A code, posted with the binding of the address's latest start. */
const verify = (email: string, code: string, client: string) =>
  call<SignedIn>("POST", "/v1/sign-in/email/verify", {
    body: { email, code, binding: bindings.get(email) ?? "bind_none" },
    client
  })

/** Signs up (or in) by code and answers the session. */
const signedInAs = (email: string, client = newClient()) =>
  Effect.gen(function* () {
    const before = (yield* mailsTo(email)).length
    const mail = yield* mailedTo(email, client, before + 1)
    const res = yield* verify(email, codeIn(mail), client)
    assert.strictEqual(res.status, 201, JSON.stringify(res.body))
    return res.body
  })

const sql = <T>(text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: service.databaseUrl })
      await client.connect()
      try {
        return (await client.query(text, values as Array<unknown>)).rows as Array<T>
      } finally {
        await client.end()
      }
    })
  )

layer(Live, { timeout: 120_000 })((it) => {
  describe("sign-in by email", () => {
    it.effect("signs up an unknown address in the sandbox: a new account named after its domain", () =>
      Effect.gen(function* () {
        const email = newAddress("ada.example.org")
        const client = newClient()
        const sent = yield* call<{ sent_to: string; expires_at: string; binding: string }>(
          "POST",
          "/v1/sign-in/email",
          { body: { email: email.toUpperCase() }, client }
        )
        assert.strictEqual(sent.status, 202)
        bindings.set(email, sent.body.binding)
        assert.match(sent.body.sent_to, /^m\*\*\*@ada\.example\.org$/)
        const mail = yield* nthMail(email, 1)
        const { service } = yield* Sandbox
        // The link leads to the dashboard with its token in the fragment only.
        assert.include(mail, `${service.baseUrl}/dashboard/#sign-in=signin_`)
        const res = yield* verify(email, codeIn(mail), client)
        assert.strictEqual(res.status, 201)
        assert.match(res.body.session_token, /^session_/)
        assert.strictEqual(res.body.account.name, "ada.example.org")
        assert.strictEqual(res.body.account.environment, "sandbox")
        assert.strictEqual(res.body.member.email, email)
        assert.strictEqual(res.body.member.passkeys, 0)
        const me = yield* call<SignedIn["member"]>("GET", "/v1/account/member", {
          token: res.body.session_token
        })
        assert.strictEqual(me.status, 200)
        assert.strictEqual(me.body.id, res.body.member.id)
        const account = yield* call<{ id: string }>("GET", "/v1/account", { token: res.body.session_token })
        assert.strictEqual(account.body.id, res.body.account.id)
        // Both attempts recorded, by kind and outcome, against the client.
        const rows = yield* sql<{ kind: string; outcome: string; member_id: string | null }>(
          "select kind, outcome, member_id from sign_in_attempts where client = $1 order by at, id",
          [client]
        )
        assert.deepStrictEqual(
          rows.map((r) => `${r.kind} ${r.outcome}`),
          ["email_send sent", "sign_up signed_in"]
        )
        assert.strictEqual(`mem_${rows[1]!.member_id}`, res.body.member.id)
      })
    )

    it.effect("signs a member in by the link's token, once; the same mail's code is then used too", () =>
      Effect.gen(function* () {
        const email = newAddress()
        const first = yield* signedInAs(email)
        const client = newClient()
        const mail = yield* mailedTo(email, client, 2)
        const token = linkTokenIn(mail)
        const res = yield* call<SignedIn>("POST", "/v1/sign-in/link", {
          body: { token, binding: bindings.get(email) },
          client
        })
        assert.strictEqual(res.status, 201)
        assert.strictEqual(res.body.member.id, first.member.id)
        assert.strictEqual(res.body.account.id, first.account.id)
        const again = yield* call("POST", "/v1/sign-in/link", {
          body: { token, binding: bindings.get(email) },
          client
        })
        assert.strictEqual(again.status, 400)
        assert.strictEqual(again.body.error?.code, "invalid_request")
        assert.strictEqual(again.body.error?.message, "The code is wrong, already used or expired.")
        const code = yield* verify(email, codeIn(mail), client)
        assert.strictEqual(code.status, 400)
      })
    )

    it.effect("refuses a used code, another address's code and an expired one", () =>
      Effect.gen(function* () {
        const a = newAddress()
        const b = newAddress()
        const client = newClient()
        const mailA = yield* mailedTo(a, client)
        const mailB = yield* mailedTo(b, client)
        const withB = yield* verify(a, codeIn(mailB), client)
        assert.strictEqual(withB.status, 400)
        const ok = yield* verify(a, codeIn(mailA), client)
        assert.strictEqual(ok.status, 201)
        const reused = yield* verify(a, codeIn(mailA), client)
        assert.strictEqual(reused.status, 400)
        // b's code, eleven minutes on.
        clock.advance(11 * 60 * 1000)
        const expired = yield* verify(b, codeIn(mailB), client)
        assert.strictEqual(expired.status, 400)
        assert.strictEqual(expired.body.error?.param, "code")
        const link = yield* call("POST", "/v1/sign-in/link", { body: { token: linkTokenIn(mailB) }, client })
        assert.strictEqual(link.status, 400)
      })
    )

    it.effect("a new code ends the older ones: the older code and link are refused, the newest works", () =>
      Effect.gen(function* () {
        const email = newAddress()
        const client = newClient()
        const older = yield* mailedTo(email, client, 1)
        const olderBinding = bindings.get(email)!
        const newer = yield* mailedTo(email, client, 2)
        assert.notStrictEqual(codeIn(older), codeIn(newer), "two draws of a million codes")
        const oldCode = yield* call("POST", "/v1/sign-in/email/verify", {
          body: { email, code: codeIn(older), binding: olderBinding },
          client
        })
        assert.strictEqual(oldCode.status, 400)
        const oldLink = yield* call("POST", "/v1/sign-in/link", {
          body: { token: linkTokenIn(older), binding: olderBinding },
          client
        })
        assert.strictEqual(oldLink.status, 400)
        assert.strictEqual(oldLink.body.error?.param, "token")
        const ok = yield* verify(email, codeIn(newer), client)
        assert.strictEqual(ok.status, 201)
      })
    )

    it.effect("10 wrong codes from one client do not stop the right code from another client", () =>
      Effect.gen(function* () {
        const email = newAddress()
        const owner = newClient()
        const mail = yield* mailedTo(email, owner)
        const right = codeIn(mail)
        const wrong = right === "000000" ? "000001" : "000000"
        const stranger = newClient()
        const answers: Array<number> = []
        for (let i = 0; i < 10; i++) answers.push((yield* verify(email, wrong, stranger)).status)
        // The pair's ceiling (5 a day) holds the stranger back; the refused ones count, the 429s do not.
        assert.deepStrictEqual(answers, [400, 400, 400, 400, 400, 429, 429, 429, 429, 429])
        const held = yield* verify(email, right, stranger)
        assert.strictEqual(held.status, 429)
        const retry = Number(held.headers.get("retry-after"))
        assert.isAbove(retry, 86_000)
        assert.isAtMost(retry, 86_400)
        const signedIn = yield* verify(email, right, owner)
        assert.strictEqual(signedIn.status, 201, JSON.stringify(signedIn.body))
        assert.strictEqual(signedIn.body.member.email, email)
      })
    )

    it.effect("the address's ceiling holds: past 25 wrong codes in a day even the right one waits", () =>
      Effect.gen(function* () {
        const email = newAddress()
        const mail = yield* mailedTo(email, newClient())
        const right = codeIn(mail)
        const wrong = right === "000000" ? "000001" : "000000"
        // Five clients, five guesses each: every pair within its own ceiling.
        const guessers = Array.from({ length: 5 }, newClient)
        for (let i = 0; i < 25; i++) {
          const res = yield* verify(email, wrong, guessers[Math.floor(i / 5)]!)
          assert.strictEqual(res.status, 400)
        }
        const capped = yield* verify(email, right, newClient())
        assert.strictEqual(capped.status, 429)
        assert.strictEqual(capped.body.error?.code, "rate_limited")
        const retry = Number(capped.headers.get("retry-after"))
        assert.isAbove(retry, 86_000)
        assert.isAtMost(retry, 86_400)
        // The day passes (and the code with it): a fresh code signs in.
        clock.advance(24 * 60 * 60 * 1000 + 1000)
        const later = yield* signedInAs(email)
        assert.strictEqual(later.member.email, email)
      })
    )

    it.effect("a code completes only with the binding of the browser that asked for it", () =>
      Effect.gen(function* () {
        const email = newAddress()
        const client = newClient()
        const mail = yield* mailedTo(email, client)
        const elsewhere = yield* call("POST", "/v1/sign-in/email/verify", {
          body: { email, code: codeIn(mail), binding: "bind_of_another_browser" },
          client
        })
        assert.strictEqual(elsewhere.status, 400)
        assert.strictEqual(elsewhere.body.error?.message, "The code is wrong, already used or expired.")
        const missing = yield* call("POST", "/v1/sign-in/email/verify", {
          body: { email, code: codeIn(mail) },
          client
        })
        assert.strictEqual(missing.status, 400)
        const here = yield* verify(email, codeIn(mail), client)
        assert.strictEqual(here.status, 201)
      })
    )

    it.effect(
      "a link opened without its binding signs in only once confirmed, after a preview naming it",
      () =>
        Effect.gen(function* () {
          const email = newAddress()
          const member = yield* signedInAs(email)
          const asking = newClient()
          const mail = yield* mailedTo(email, asking, 2)
          const token = linkTokenIn(mail)
          const other = newClient()
          const bare = yield* call("POST", "/v1/sign-in/link", { body: { token }, client: other })
          assert.strictEqual(bare.status, 400)
          assert.strictEqual(bare.body.error?.param, "confirmed")
          const foreign = yield* call("POST", "/v1/sign-in/link", {
            body: { token, binding: "bind_of_another_browser" },
            client: other
          })
          assert.strictEqual(foreign.status, 400)
          assert.strictEqual(foreign.body.error?.param, "confirmed")
          const preview = yield* call<{
            email: string
            account_name: string | null
            requested_from: string | null
            requested_at: string
          }>("POST", "/v1/sign-in/link/preview", { body: { token }, client: other })
          assert.strictEqual(preview.status, 200)
          assert.strictEqual(preview.body.email, email)
          assert.strictEqual(preview.body.account_name, member.account.name)
          assert.strictEqual(preview.body.requested_from, asking)
          const confirmed = yield* call<SignedIn>("POST", "/v1/sign-in/link", {
            body: { token, confirmed: true },
            client: other
          })
          assert.strictEqual(confirmed.status, 201)
          assert.strictEqual(confirmed.body.member.id, member.member.id)
          const used = yield* call("POST", "/v1/sign-in/link/preview", { body: { token }, client: other })
          assert.strictEqual(used.status, 400)
        })
    )

    it.effect("counts a burst of concurrent guesses before any is checked: exactly 25 are tried", () =>
      Effect.gen(function* () {
        const email = newAddress()
        yield* mailedTo(email, newClient())
        const answers = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => verify(email, String(i).padStart(6, "9"), newClient())),
          { concurrency: "unbounded" }
        )
        const statuses = answers.map((a) => a.status)
        assert.strictEqual(statuses.filter((s) => s === 400).length, 25)
        assert.strictEqual(statuses.filter((s) => s === 429).length, 15)
        const rows = yield* sql<{ n: number }>(
          "select count(*)::int as n from sign_in_attempts where email = $1 and kind = 'email_code'",
          [email]
        )
        assert.strictEqual(rows[0]!.n, 25)
      })
    )

    it.effect("caps mail to one address, member or not, and says when to retry", () =>
      Effect.gen(function* () {
        const email = newAddress()
        for (let i = 0; i < 5; i++) {
          const res = yield* call("POST", "/v1/sign-in/email", { body: { email }, client: newClient() })
          assert.strictEqual(res.status, 202)
        }
        const flooded = yield* call("POST", "/v1/sign-in/email", { body: { email }, client: newClient() })
        assert.strictEqual(flooded.status, 429)
        assert.isAbove(Number(flooded.headers.get("retry-after")), 0)
        yield* nthMail(email, 5)
        yield* pause(300)
        assert.strictEqual((yield* mailsTo(email)).length, 5)
      })
    )

    it.effect("caps one client's attempts across addresses", () =>
      Effect.gen(function* () {
        const client = newClient()
        for (let i = 0; i < 30; i++) {
          const res = yield* verify(newAddress(), "123456", client)
          assert.strictEqual(res.status, 400)
        }
        const capped = yield* call("POST", "/v1/sign-in/email", { body: { email: newAddress() }, client })
        assert.strictEqual(capped.status, 429)
        assert.isAbove(Number(capped.headers.get("retry-after")), 0)
        // Another client is not held back by it.
        const other = yield* call("POST", "/v1/sign-in/email", {
          body: { email: newAddress() },
          client: newClient()
        })
        assert.strictEqual(other.status, 202)
      })
    )

    it.effect("refuses malformed addresses, unknown fields and oversized bodies", () =>
      Effect.gen(function* () {
        const client = newClient()
        for (const body of [{ email: "not-an-address" }, { email: newAddress(), extra: 1 }, {}]) {
          const res = yield* call("POST", "/v1/sign-in/email", { body, client })
          assert.strictEqual(res.status, 400)
          assert.strictEqual(res.body.error?.code, "invalid_request")
        }
        const big = yield* call("POST", "/v1/sign-in/link", { body: { token: "x".repeat(9 * 1024) }, client })
        assert.strictEqual(big.status, 413)
      })
    )

    it.effect("answers CORS to the dashboard's origin only", () =>
      Effect.gen(function* () {
        const { service } = yield* Sandbox
        const preflight = (origin: string) =>
          call("OPTIONS", "/v1/sign-in/email", {
            headers: { origin, "access-control-request-method": "POST" }
          })
        const own = yield* preflight(service.baseUrl)
        assert.strictEqual(own.headers.get("access-control-allow-origin"), service.baseUrl)
        const stranger = yield* preflight("https://evil.example.com")
        assert.isNull(stranger.headers.get("access-control-allow-origin"))
      })
    )
  })

  describe("invitations and members", () => {
    it.effect("an accepted invitation makes a member of the account, who then signs in by code", () =>
      Effect.gen(function* () {
        const owner = yield* signedInAs(newAddress())
        const invitee = newAddress("other.example.net")
        const created = yield* call<{
          id: string
          email: string
          accepted_at: string | null
          expires_at: string
        }>("POST", "/v1/account/invites", { body: { email: invitee }, token: owner.session_token })
        assert.strictEqual(created.status, 201)
        assert.match(created.body.id, /^inv_/)
        assert.isNull(created.body.accepted_at)
        const { service } = yield* Sandbox
        const mail = yield* nthMail(invitee, 1)
        assert.include(mail, `${service.baseUrl}/dashboard/#invite=invite_`)
        const client = newClient()
        const accepted = yield* call<SignedIn>("POST", "/v1/sign-in/invite", {
          body: { token: inviteTokenIn(mail), confirmed: true },
          client
        })
        assert.strictEqual(accepted.status, 201)
        assert.strictEqual(accepted.body.account.id, owner.account.id)
        assert.strictEqual(accepted.body.member.email, invitee)
        const reused = yield* call("POST", "/v1/sign-in/invite", {
          body: { token: inviteTokenIn(mail), confirmed: true },
          client
        })
        assert.strictEqual(reused.status, 400)
        const invites = yield* call<{ invites: Array<{ id: string; accepted_at: string | null }> }>(
          "GET",
          "/v1/account/invites",
          { token: owner.session_token }
        )
        assert.isNotNull(invites.body.invites.find((i) => i.id === created.body.id)?.accepted_at)
        const members = yield* call<{ members: Array<{ id: string }> }>("GET", "/v1/account/members", {
          token: owner.session_token
        })
        assert.deepStrictEqual(
          members.body.members.map((m) => m.id).sort(),
          [owner.member.id, accepted.body.member.id].sort()
        )
        const later = yield* signedInAs(invitee)
        assert.strictEqual(later.account.id, owner.account.id)
        assert.strictEqual(later.member.id, accepted.body.member.id)
        // An address that is a member of this account already cannot be invited again.
        const twice = yield* call("POST", "/v1/account/invites", {
          body: { email: invitee },
          token: owner.session_token
        })
        assert.strictEqual(twice.status, 409)
        assert.strictEqual(twice.body.error?.code, "invalid_state")
      })
    )

    it.effect(
      "an invitation is accepted only once confirmed, after a preview naming the account and the inviter",
      () =>
        Effect.gen(function* () {
          const owner = yield* signedInAs(newAddress())
          const invitee = newAddress()
          yield* call("POST", "/v1/account/invites", { body: { email: invitee }, token: owner.session_token })
          const token = inviteTokenIn(yield* nthMail(invitee, 1))
          const client = newClient()
          const bare = yield* call("POST", "/v1/sign-in/invite", { body: { token }, client })
          assert.strictEqual(bare.status, 400)
          const preview = yield* call<{ email: string; account_name: string; invited_by: string | null }>(
            "POST",
            "/v1/sign-in/invite/preview",
            { body: { token }, client }
          )
          assert.strictEqual(preview.status, 200)
          assert.deepInclude(preview.body, {
            email: invitee,
            account_name: owner.account.name,
            invited_by: owner.member.email
          })
          const accepted = yield* call<SignedIn>("POST", "/v1/sign-in/invite", {
            body: { token, confirmed: true },
            client
          })
          assert.strictEqual(accepted.status, 201)
          assert.strictEqual(accepted.body.account.id, owner.account.id)
          const wrong = yield* call("POST", "/v1/sign-in/invite/preview", { body: { token }, client })
          assert.strictEqual(wrong.status, 400)
        })
    )

    it.effect(
      "inviting another account's member answers as any invitation; the address gets a notice, no link",
      () =>
        Effect.gen(function* () {
          const owner = yield* signedInAs(newAddress())
          const elsewhere = yield* signedInAs(newAddress("elsewhere.example.org"))
          const stranger = newAddress()
          const shape = (body: Record<string, unknown>) =>
            Object.fromEntries(Object.entries(body).map(([k, v]) => [k, k === "email" ? "" : typeof v]))
          const fresh = yield* call("POST", "/v1/account/invites", {
            body: { email: stranger },
            token: owner.session_token
          })
          const taken = yield* call("POST", "/v1/account/invites", {
            body: { email: elsewhere.member.email },
            token: owner.session_token
          })
          assert.strictEqual(taken.status, fresh.status)
          assert.strictEqual(taken.status, 201)
          assert.deepStrictEqual(shape(taken.body), shape(fresh.body))
          assert.deepStrictEqual(
            [...taken.headers.keys()].filter((k) => k !== "date" && k !== "x-request-id").sort(),
            [...fresh.headers.keys()].filter((k) => k !== "date" && k !== "x-request-id").sort()
          )
          const listed = yield* call<{ invites: Array<{ email: string }> }>("GET", "/v1/account/invites", {
            token: owner.session_token
          })
          assert.includeMembers(
            listed.body.invites.map((i) => i.email),
            [stranger, elsewhere.member.email]
          )
          // Its mail (after its sign-in code) is a notice naming the account and the inviter, with no link.
          const notice = yield* nthMail(elsewhere.member.email, 2)
          assert.include(notice, owner.account.name)
          assert.include(notice, owner.member.email)
          assert.include(notice, "already belongs to another Deposits account")
          assert.notInclude(notice, "#invite=")
          // The address stays in its own account.
          const again = yield* signedInAs(elsewhere.member.email)
          assert.strictEqual(again.account.id, elsewhere.account.id)
        })
    )

    it.effect("a revoked invitation's link no longer works", () =>
      Effect.gen(function* () {
        const owner = yield* signedInAs(newAddress())
        const invitee = newAddress()
        const created = yield* call<{ id: string }>("POST", "/v1/account/invites", {
          body: { email: invitee },
          token: owner.session_token
        })
        const mail = yield* nthMail(invitee, 1)
        const revoked = yield* call("DELETE", `/v1/account/invites/${created.body.id}`, {
          token: owner.session_token
        })
        assert.strictEqual(revoked.status, 204)
        const accept = yield* call("POST", "/v1/sign-in/invite", {
          body: { token: inviteTokenIn(mail), confirmed: true },
          client: newClient()
        })
        assert.strictEqual(accept.status, 400)
        const again = yield* call("DELETE", `/v1/account/invites/${created.body.id}`, {
          token: owner.session_token
        })
        assert.strictEqual(again.status, 404)
        assert.strictEqual(again.body.error?.code, "invite_not_found")
      })
    )

    it.scoped(
      "removing a member ends their sessions at once, on another instance too, and deletes their passkeys",
      () =>
        Effect.gen(function* () {
          const { service } = yield* Sandbox
          const other = yield* scopedService({
            database: { url: service.databaseUrl, drop: async () => {} },
            clock,
            config: NATS
          })
          const owner = yield* signedInAs(newAddress())
          const invitee = newAddress()
          yield* call("POST", "/v1/account/invites", { body: { email: invitee }, token: owner.session_token })
          const joined = yield* call<SignedIn>("POST", "/v1/sign-in/invite", {
            body: { token: inviteTokenIn(yield* nthMail(invitee, 1)), confirmed: true },
            client: newClient()
          })
          const memberUuid = joined.body.member.id.slice("mem_".length)
          yield* sql(
            `insert into passkeys (id, member_id, credential_id, public_key, counter, name, created_at)
             values (gen_random_uuid(), $1, $2, '\\x00', 0, 'laptop', now())`,
            [memberUuid, `cred-${memberUuid}`]
          )
          const me = yield* call<{ passkeys: number }>("GET", "/v1/account/member", {
            token: joined.body.session_token
          })
          assert.strictEqual(me.body.passkeys, 1)
          // Both instances have the session cached now.
          for (const on of [undefined, other]) {
            for (let i = 0; i < 2; i++) {
              const res = yield* call("GET", "/v1/account", {
                token: joined.body.session_token,
                ...(on ? { on } : {})
              })
              assert.strictEqual(res.status, 200)
            }
          }
          const removed = yield* call("DELETE", `/v1/account/members/${joined.body.member.id}`, {
            token: owner.session_token
          })
          assert.strictEqual(removed.status, 204)
          const here = yield* call("GET", "/v1/account", { token: joined.body.session_token })
          assert.strictEqual(here.status, 401)
          const started = Date.now()
          const ended = yield* eventually(
            Effect.map(
              call("GET", "/v1/account", { token: joined.body.session_token, on: other }),
              (r) => r.status === 401
            ),
            1_000,
            10
          )
          assert.isTrue(ended)
          assert.isBelow(Date.now() - started, 500)
          const keys = yield* sql<{ n: number }>(
            "select count(*)::int as n from passkeys where member_id = $1",
            [memberUuid]
          )
          assert.strictEqual(keys[0]!.n, 0)
          // The removed address can no longer sign in to the account (sign-up gives it an account of its own).
          const again = yield* signedInAs(invitee)
          assert.notStrictEqual(again.account.id, owner.account.id)
          // The last member stays.
          const last = yield* call("DELETE", `/v1/account/members/${owner.member.id}`, {
            token: owner.session_token
          })
          assert.strictEqual(last.status, 409)
          assert.strictEqual(last.body.error?.code, "invalid_state")
        })
    )

    it.effect("keeps accounts apart: another account's member and invitation are not found", () =>
      Effect.gen(function* () {
        const owner = yield* signedInAs(newAddress())
        const invite = yield* call<{ id: string }>("POST", "/v1/account/invites", {
          body: { email: newAddress() },
          token: owner.session_token
        })
        const stranger = yield* signedInAs(newAddress())
        const member = yield* call("DELETE", `/v1/account/members/${owner.member.id}`, {
          token: stranger.session_token
        })
        assert.strictEqual(member.status, 404)
        assert.strictEqual(member.body.error?.code, "member_not_found")
        const inv = yield* call("DELETE", `/v1/account/invites/${invite.body.id}`, {
          token: stranger.session_token
        })
        assert.strictEqual(inv.status, 404)
        assert.strictEqual(inv.body.error?.code, "invite_not_found")
        const list = yield* call<{ invites: Array<unknown> }>("GET", "/v1/account/invites", {
          token: stranger.session_token
        })
        assert.strictEqual(list.body.invites.length, 0)
        const malformed = yield* call("DELETE", "/v1/account/members/mem_nope", {
          token: stranger.session_token
        })
        assert.strictEqual(malformed.status, 404)
        // An API key is refused on the account's people; the operator CLI's session belongs to no member.
        const { service } = yield* Sandbox
        const operator = yield* Effect.promise(() => createMerchant(service.databaseUrl))
        const byKey = yield* call("GET", "/v1/account/members", {
          headers: operator.headers("api_key")
        })
        assert.strictEqual(byKey.status, 401)
        assert.strictEqual(byKey.body.error?.code, "identity_unauthorized")
        const who = yield* call("GET", "/v1/account/member", {
          headers: operator.headers("session")
        })
        assert.strictEqual(who.status, 404)
        assert.strictEqual(who.body.error?.code, "member_not_found")
        const unauthenticated = yield* call("GET", "/v1/account/members")
        assert.strictEqual(unauthenticated.status, 401)
      })
    )
  })

  describe("the operator's CLI", () => {
    it.scoped("creates an account with its owner invited: the link is printed and mailed through SMTP", () =>
      Effect.gen(function* () {
        const { service } = yield* Sandbox
        const smtp = yield* Effect.acquireRelease(
          Effect.promise(() => startSmtpInbox()),
          (s) => Effect.promise(() => s.close())
        )
        const owner = newAddress("cli.example.com")
        const env = {
          ...process.env,
          DATABASE_URL: service.databaseUrl,
          SMTP_URL: smtp.url,
          PUBLIC_BASE_URL: service.baseUrl
        }
        const created = JSON.parse(
          (yield* Effect.promise(() =>
            run(
              process.execPath,
              [
                "src/cli/deposits.mjs",
                "accounts",
                "create",
                "--name",
                "CLI shop",
                "--owner-email",
                owner,
                "--json"
              ],
              { env }
            )
          )).stdout
        ) as { account_id: string; invite_link: string; invite_mailed: string }
        assert.strictEqual(created.invite_mailed, "yes")
        assert.isTrue(created.invite_link.startsWith(`${service.baseUrl}/dashboard/#invite=invite_`))
        const mailed = smtp.inbox.find((m) => m.to === owner)
        assert.isDefined(mailed)
        assert.include(decoded(mailed!.raw), created.invite_link)
        const accepted = yield* call<SignedIn>("POST", "/v1/sign-in/invite", {
          body: { token: created.invite_link.split("#invite=")[1], confirmed: true },
          client: newClient()
        })
        assert.strictEqual(accepted.status, 201)
        assert.strictEqual(accepted.body.account.id, created.account_id)
        assert.strictEqual(accepted.body.account.name, "CLI shop")
        // A second person, invited to the same account; an address already a member is refused.
        const colleague = newAddress("cli.example.com")
        const invited = JSON.parse(
          (yield* Effect.promise(() =>
            run(
              process.execPath,
              [
                "src/cli/deposits.mjs",
                "accounts",
                "invite",
                "--account",
                created.account_id,
                "--email",
                colleague,
                "--json"
              ],
              { env }
            )
          )).stdout
        ) as { invite_email: string; invite_link: string }
        assert.strictEqual(invited.invite_email, colleague)
        const refused = yield* Effect.promise(() =>
          run(
            process.execPath,
            ["src/cli/deposits.mjs", "accounts", "invite", "--account", created.account_id, "--email", owner],
            { env }
          ).then(
            () => ({ code: 0, stderr: "" }),
            (e: { code: number; stderr: string }) => e
          )
        )
        assert.strictEqual(refused.code, 1)
        assert.include(refused.stderr, "already a member")
      })
    )
  })

  describe("sessions", () => {
    it.effect("a member lists and ends their own sessions, never another member's", () =>
      Effect.gen(function* () {
        const email = newAddress()
        const first = yield* signedInAs(email)
        const second = yield* signedInAs(email)
        const listed = yield* call<{
          sessions: Array<{ id: string; current: boolean; user_agent: string | null }>
        }>("GET", "/v1/account/sessions", { token: first.session_token, headers: {} })
        assert.strictEqual(listed.status, 200)
        assert.strictEqual(listed.body.sessions.length, 2)
        const current = listed.body.sessions.filter((s) => s.current)
        assert.strictEqual(current.length, 1)
        const otherSession = listed.body.sessions.find((s) => !s.current)!
        assert.match(otherSession.id, /^ses_/)
        // Another member of another account cannot end it.
        const stranger = yield* signedInAs(newAddress())
        const refused = yield* call("DELETE", `/v1/account/sessions/${otherSession.id}`, {
          token: stranger.session_token
        })
        assert.strictEqual(refused.status, 404)
        assert.strictEqual(refused.body.error?.code, "session_not_found")
        // Prime the cache, then end it: the next request is refused at once.
        assert.strictEqual((yield* call("GET", "/v1/account", { token: second.session_token })).status, 200)
        const ended = yield* call("DELETE", `/v1/account/sessions/${otherSession.id}`, {
          token: first.session_token
        })
        assert.strictEqual(ended.status, 204)
        assert.strictEqual((yield* call("GET", "/v1/account", { token: second.session_token })).status, 401)
        assert.strictEqual((yield* call("GET", "/v1/account", { token: first.session_token })).status, 200)
      })
    )

    it.effect(
      "a session of a removed member is refused even if its revocation was missed (a sign-in racing it)",
      () =>
        Effect.gen(function* () {
          const owner = yield* signedInAs(newAddress())
          const late = yield* signedInAs(owner.member.email)
          // As if the sign-in had inserted its session just after the removal revoked the member's sessions.
          yield* sql("update members set removed_at = now() where id = $1", [
            owner.member.id.slice("mem_".length)
          ])
          const res = yield* call("GET", "/v1/account", { token: late.session_token })
          assert.strictEqual(res.status, 401)
        })
    )

    it.effect(
      "an unknown session answers 404 session_not_found, to a member and to the operator's session",
      () =>
        Effect.gen(function* () {
          const member = yield* signedInAs(newAddress())
          const unknown = `ses_${crypto.randomUUID()}`
          for (const id of [unknown, "ses_nope", `mem_${crypto.randomUUID()}`]) {
            const res = yield* call("DELETE", `/v1/account/sessions/${id}`, { token: member.session_token })
            assert.strictEqual(res.status, 404)
            assert.strictEqual(res.body.error?.code, "session_not_found")
          }
          const { service } = yield* Sandbox
          const operator = yield* Effect.promise(() => createMerchant(service.databaseUrl))
          const byOperator = yield* call("DELETE", `/v1/account/sessions/${unknown}`, {
            headers: operator.headers("session")
          })
          assert.strictEqual(byOperator.status, 404)
          assert.strictEqual(byOperator.body.error?.code, "session_not_found")
        })
    )

    it.effect("a member of the same account cannot end a colleague's session", () =>
      Effect.gen(function* () {
        const owner = yield* signedInAs(newAddress())
        const invitee = newAddress()
        yield* call("POST", "/v1/account/invites", { body: { email: invitee }, token: owner.session_token })
        const colleague = yield* call<SignedIn>("POST", "/v1/sign-in/invite", {
          body: { token: inviteTokenIn(yield* nthMail(invitee, 1)), confirmed: true },
          client: newClient()
        })
        const own = yield* call<{ sessions: Array<{ id: string }> }>("GET", "/v1/account/sessions", {
          token: owner.session_token
        })
        const res = yield* call("DELETE", `/v1/account/sessions/${own.body.sessions[0]!.id}`, {
          token: colleague.body.session_token
        })
        assert.strictEqual(res.status, 404)
        assert.strictEqual((yield* call("GET", "/v1/account", { token: owner.session_token })).status, 200)
      })
    )
  })
})
