import { assert, beforeEach, describe, layer } from "@effect/vitest"
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON
} from "@simplewebauthn/server"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { english, generateMnemonic } from "viem/accounts"
import type pg from "pg"
import { Accounts } from "../../../services/merchants/Accounts"
import { CHALLENGE_TTL_MS } from "../../../services/merchants/Passkeys"
import { ControlledClock } from "../../support/ControlledClock"
import { createMerchant } from "../../support/Merchant"
import type { RunningService } from "../../support/Service"
import { type Bend, SoftwareAuthenticator } from "../../support/SoftwareAuthenticator"
import { onService, scopedDatabase, scopedPgClient, scopedService } from "../../support/scopedResources"

/** The dashboard runs on its own origin here, so the rpID is its hostname and not the API's. */
const DASHBOARD = "https://dashboard.example.test"
const REFUSED = "The passkey could not be verified."

class Fixture extends Context.Tag("test/PasskeysFixture")<
  Fixture,
  {
    readonly clock: ControlledClock
    readonly service: RunningService
    readonly db: pg.Client
    readonly database: { readonly url: string; readonly drop: () => Promise<void> }
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const database = yield* scopedDatabase
    const clock = new ControlledClock()
    const service = yield* scopedService({
      database,
      clock,
      config: { dashboardOrigin: Option.some(DASHBOARD) }
    })
    const db = yield* scopedPgClient(database.url)
    return { clock, service, db, database }
  })
)

interface Member {
  readonly accountId: string
  readonly memberId: string
  readonly email: string
  readonly apiKey: string
  readonly session: Record<string, string>
}

interface PasskeyWire {
  readonly id: string
  readonly name: string
  readonly created_at: string
  readonly last_used_at: string | null
}

/** The fields these routes answer with, all in one: each test reads those its route has. */
interface Answered {
  readonly error: { readonly code: string; readonly message: string }
  readonly challenge_id: string
  readonly options: PublicKeyCredentialCreationOptionsJSON & PublicKeyCredentialRequestOptionsJSON
  readonly passkeys: ReadonlyArray<PasskeyWire>
  readonly next_cursor: null
  readonly session_token: string
  readonly expires_at: string
  readonly member: {
    readonly id: string
    readonly email: string
    readonly created_at: string
    readonly passkeys: number
  }
  readonly account: { readonly id: string; readonly environment: string }
  readonly id: string
}
interface Answer {
  readonly status: number
  readonly body: Answered
}

/**
 * The client address the sign-in limits count, as a proxy on loopback names it: each test signs in from an address
 * of its own, so one test's attempts do not spend another's limit.
 */
let clients = 0
let client = ""
const forwardedFor = () => ({ "x-forwarded-for": client })

let emails = 0
/** A member of an account (a new one unless given), signed in with a dashboard session of their own. */
const newMember = (account?: Member) =>
  Effect.gen(function* () {
    const { service, db } = yield* Fixture
    const merchant =
      account === undefined ? yield* Effect.promise(() => createMerchant(service.databaseUrl)) : undefined
    const accountId = account?.accountId ?? merchant!.accountId.slice("acct_".length)
    const email = `member${++emails}-${Date.now()}@example.test`
    const inserted = yield* Effect.promise(() =>
      db.query<{ id: string }>(
        "insert into members (id, account_id, email, created_at) values (gen_random_uuid(), $1, $2, now()) returning id",
        [accountId, email]
      )
    )
    const memberId = inserted.rows[0]!.id
    const session = yield* onService(
      service,
      Effect.flatMap(Accounts, (accounts) => accounts.createSession(accountId, { memberId }))
    )
    return {
      accountId,
      memberId,
      email,
      apiKey: account?.apiKey ?? merchant!.apiKey,
      session: { authorization: `Bearer ${session.token}` }
    } satisfies Member
  })

const call = (
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}
) =>
  Effect.flatMap(Fixture, ({ service }) =>
    Effect.promise(async () => {
      const res = await service.request(path, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: {
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
          ...init.headers
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      })
      const text = await res.text()
      return {
        status: res.status,
        body: (text === "" ? null : JSON.parse(text)) as Answered
      } satisfies Answer
    })
  )

/** Registers a passkey on the authenticator for the member, over HTTP; answers the new Passkey. */
const registerPasskey = (member: Member, authenticator: SoftwareAuthenticator, name = "Laptop") =>
  Effect.gen(function* () {
    const started = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
    assert.strictEqual(started.status, 200)
    const options = started.body.options as PublicKeyCredentialCreationOptionsJSON
    const response = authenticator.register(options)
    const created = yield* call("/v1/account/passkeys", {
      headers: member.session,
      body: { challenge_id: started.body.challenge_id, name, response }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    return created.body as unknown as PasskeyWire
  })

/** Starts a passkey sign-in: its challenge id and options. */
const signInOptions = Effect.gen(function* () {
  const started = yield* call("/v1/sign-in/passkey/options", { headers: forwardedFor(), body: {} })
  assert.strictEqual(started.status, 200)
  return {
    challengeId: started.body.challenge_id as string,
    options: started.body.options as PublicKeyCredentialRequestOptionsJSON
  }
})

const postAssertion = (challengeId: string, response: AuthenticationResponseJSON) =>
  call("/v1/sign-in/passkey", { headers: forwardedFor(), body: { challenge_id: challengeId, response } })

/** A whole sign-in with the authenticator, bent or not. */
const signIn = (authenticator: SoftwareAuthenticator, bend?: Bend) =>
  Effect.flatMap(signInOptions, ({ challengeId, options }) =>
    postAssertion(challengeId, authenticator.authenticate(options, bend))
  )

/** An assertion shaped right and signed by nobody. */
const WELL_FORMED_ASSERTION: AuthenticationResponseJSON = {
  id: "AAAA",
  rawId: "AAAA",
  response: { clientDataJSON: "AAAA", authenticatorData: "AAAA", signature: "AAAA" },
  clientExtensionResults: {},
  type: "public-key"
}

const assertRefused = (answer: Answer) => {
  assert.strictEqual(answer.status, 400, JSON.stringify(answer.body))
  assert.strictEqual(answer.body.error.code, "invalid_request")
  assert.strictEqual(answer.body.error.message, REFUSED)
}

layer(FixtureLive, { timeout: 120_000 })((it) => {
  describe("passkeys", () => {
    beforeEach(() => {
      client = `198.51.100.${++clients}`
    })

    it.effect("registers, lists, signs in, and once removed no longer signs in", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)

        const started = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
        const options = started.body.options as PublicKeyCredentialCreationOptionsJSON
        assert.strictEqual(options.rp.id, "dashboard.example.test")
        assert.strictEqual(options.rp.name, "Deposits")
        assert.strictEqual(options.user.name, member.email)
        assert.strictEqual(options.authenticatorSelection?.residentKey, "required")
        assert.strictEqual(options.authenticatorSelection?.userVerification, "required")
        assert.match(started.body.challenge_id, /^[0-9a-f-]{36}$/)

        const passkey = yield* registerPasskey(member, authenticator, "Work laptop")
        assert.match(passkey.id, /^pk_[0-9a-f-]{36}$/)
        assert.strictEqual(passkey.name, "Work laptop")
        assert.isNull(passkey.last_used_at)
        assert.deepStrictEqual(Object.keys(passkey).sort(), ["created_at", "id", "last_used_at", "name"])

        // A second registration is told not to make a second credential on the same authenticator.
        const again = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
        const excluded =
          (again.body.options as PublicKeyCredentialCreationOptionsJSON).excludeCredentials ?? []
        assert.deepStrictEqual(
          excluded.map((c) => c.id),
          [...authenticator.credentials.keys()]
        )

        const listed = yield* call("/v1/account/passkeys", { headers: member.session })
        assert.strictEqual(listed.status, 200)
        assert.deepStrictEqual(listed.body as unknown, { passkeys: [passkey], next_cursor: null })
        // The audit log names the passkey and who added it (and every member is mailed: SecurityNotices).
        const log = yield* call("/v1/account/audit-log?limit=1", { headers: member.session })
        type Entry = { action: string; target_id: string; actor: { label: string } }
        const [added] = (log.body as unknown as { entries: Array<Entry> }).entries
        assert.deepStrictEqual(
          { action: added?.action, target: added?.target_id, actor: added?.actor.label },
          { action: "passkey.added", target: passkey.id, actor: member.email }
        )

        const { challengeId, options: requestOptions } = yield* signInOptions
        const signedIn = yield* call("/v1/sign-in/passkey", {
          headers: { ...forwardedFor(), "user-agent": "Passkey test browser/1.0" },
          body: { challenge_id: challengeId, response: authenticator.authenticate(requestOptions) }
        })
        assert.strictEqual(signedIn.status, 201, JSON.stringify(signedIn.body))
        assert.match(signedIn.body.session_token, /^session_/)
        assert.match(signedIn.body.expires_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
        assert.deepStrictEqual(signedIn.body.member, {
          id: `mem_${member.memberId}`,
          email: member.email,
          created_at: signedIn.body.member.created_at,
          passkeys: 1
        })
        assert.strictEqual(signedIn.body.account.id, `acct_${member.accountId}`)
        assert.strictEqual(signedIn.body.account.environment, "sandbox")

        const bearer = { authorization: `Bearer ${signedIn.body.session_token}` }
        const account = yield* call("/v1/account", { headers: bearer })
        assert.strictEqual(account.status, 200)
        assert.strictEqual(account.body.id, `acct_${member.accountId}`)
        // The new session is the member's: it sees their passkeys.
        const theirs = yield* call("/v1/account/passkeys", { headers: bearer })
        assert.strictEqual(theirs.body.passkeys.length, 1)
        assert.isNotNull(theirs.body.passkeys[0]?.last_used_at)

        const { db } = yield* Fixture
        const stored = yield* Effect.promise(() =>
          db.query<{ member_id: string; counter: string; transports: Array<string> }>(
            "select member_id, counter::text, transports from passkeys where id = $1",
            [passkey.id.slice(3)]
          )
        )
        assert.deepStrictEqual(stored.rows, [
          { member_id: member.memberId, counter: "1", transports: ["internal"] }
        ])

        const sessions = yield* Effect.promise(() =>
          db.query<{ member_id: string; user_agent: string | null }>(
            "select member_id, user_agent from dashboard_sessions where digest = sha256($1::bytea)",
            [Buffer.from(signedIn.body.session_token)]
          )
        )
        assert.deepStrictEqual(sessions.rows, [
          { member_id: member.memberId, user_agent: "Passkey test browser/1.0" }
        ])

        const removed = yield* call(`/v1/account/passkeys/${passkey.id}`, {
          method: "DELETE",
          headers: member.session
        })
        assert.strictEqual(removed.status, 204)
        assert.deepStrictEqual(
          (yield* call("/v1/account/passkeys", { headers: member.session })).body as unknown,
          {
            passkeys: [],
            next_cursor: null
          }
        )
        assertRefused(yield* signIn(authenticator))
        const twice = yield* call(`/v1/account/passkeys/${passkey.id}`, {
          method: "DELETE",
          headers: member.session
        })
        assert.strictEqual(twice.status, 404)
        assert.strictEqual(twice.body.error.code, "passkey_not_found")
      })
    )

    it.effect("refuses an assertion replayed on its challenge, even re-signed with a fresh counter", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        const { challengeId, options } = yield* signInOptions
        const assertion = authenticator.authenticate(options)
        assert.strictEqual((yield* postAssertion(challengeId, assertion)).status, 201)
        assertRefused(yield* postAssertion(challengeId, assertion))
        assertRefused(yield* postAssertion(challengeId, authenticator.authenticate(options)))
        // The authenticator still works with a challenge of its own.
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
      })
    )

    it.effect("refuses an assertion made for another origin or another rpID", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        assertRefused(yield* signIn(authenticator, { origin: "https://dashboard.example.test.evil.test" }))
        assertRefused(yield* signIn(authenticator, { origin: "http://dashboard.example.test" }))
        assertRefused(yield* signIn(authenticator, { rpId: "evil.test" }))
        assertRefused(yield* signIn(authenticator, { rpId: "example.test" }))
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
      })
    )

    it.effect("refuses a registration made for another origin or rpID, or on a used challenge", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        for (const bend of [
          { origin: "https://evil.test" },
          { rpId: "evil.test" },
          { userVerified: false }
        ]) {
          const started = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
          const response = authenticator.register(started.body.options, bend)
          const answer = yield* call("/v1/account/passkeys", {
            headers: member.session,
            body: { challenge_id: started.body.challenge_id, name: "Bent", response }
          })
          assertRefused(answer)
        }
        const started = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
        const response = authenticator.register(started.body.options)
        const body = { challenge_id: started.body.challenge_id, name: "Once", response }
        assert.strictEqual(
          (yield* call("/v1/account/passkeys", { headers: member.session, body })).status,
          201
        )
        assertRefused(yield* call("/v1/account/passkeys", { headers: member.session, body }))
        // Another member cannot finish a ceremony this member started.
        const other = yield* newMember()
        const theirs = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
        assertRefused(
          yield* call("/v1/account/passkeys", {
            headers: other.session,
            body: {
              challenge_id: theirs.body.challenge_id,
              name: "Stolen",
              response: authenticator.register(theirs.body.options)
            }
          })
        )
        assert.strictEqual(
          (yield* call("/v1/account/passkeys", { headers: member.session })).body.passkeys.length,
          1
        )
        assert.strictEqual(
          (yield* call("/v1/account/passkeys", { headers: other.session })).body.passkeys.length,
          0
        )
      })
    )

    it.effect("refuses a challenge older than its five minutes", () =>
      Effect.gen(function* () {
        const { clock } = yield* Fixture
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)

        const late = yield* signInOptions
        clock.advance(CHALLENGE_TTL_MS + 1_000)
        assertRefused(yield* postAssertion(late.challengeId, authenticator.authenticate(late.options)))

        const inTime = yield* signInOptions
        clock.advance(CHALLENGE_TTL_MS - 5_000)
        assert.strictEqual(
          (yield* postAssertion(inTime.challengeId, authenticator.authenticate(inTime.options))).status,
          201
        )

        const started = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
        clock.advance(CHALLENGE_TTL_MS + 1_000)
        assertRefused(
          yield* call("/v1/account/passkeys", {
            headers: member.session,
            body: {
              challenge_id: started.body.challenge_id,
              name: "Late",
              response: authenticator.register(started.body.options)
            }
          })
        )
      })
    )

    it.effect("refuses the passkey of a removed member", () =>
      Effect.gen(function* () {
        const { db } = yield* Fixture
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
        yield* Effect.promise(() =>
          db.query("update members set removed_at = now() where id = $1", [member.memberId])
        )
        assertRefused(yield* signIn(authenticator))
      })
    )

    it.effect("refuses a counter that did not move forward (a cloned authenticator)", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
        assertRefused(yield* signIn(authenticator, { counter: 2 }))
        assertRefused(yield* signIn(authenticator, { counter: 1 }))
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
      })
    )

    it.effect("refuses an unknown passkey, a bad signature and an unverified user alike", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        const stranger = new SoftwareAuthenticator(DASHBOARD)
        stranger.register({
          ...(yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })).body.options
        })
        assertRefused(yield* signIn(stranger))

        const { challengeId, options } = yield* signInOptions
        const assertion = authenticator.authenticate(options)
        const signature = Buffer.from(assertion.response.signature, "base64url")
        signature[signature.length - 1] = signature[signature.length - 1]! ^ 1
        assertRefused(
          yield* postAssertion(challengeId, {
            ...assertion,
            response: { ...assertion.response, signature: signature.toString("base64url") }
          })
        )
        assertRefused(yield* signIn(authenticator, { userVerified: false }))
        assertRefused(
          yield* postAssertion("0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b", authenticator.authenticate(options))
        )
      })
    )

    it.effect("answers 404 for another member's or another account's passkey, and for malformed ids", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const colleague = yield* newMember(member)
        const stranger = yield* newMember()
        const passkey = yield* registerPasskey(member, new SoftwareAuthenticator(DASHBOARD))
        for (const [who, id] of [
          [colleague, passkey.id],
          [stranger, passkey.id],
          [member, passkey.id.slice(3)],
          [member, `mem_${passkey.id.slice(3)}`],
          [member, "pk_nope"]
        ] as const) {
          const answer = yield* call(`/v1/account/passkeys/${id}`, { method: "DELETE", headers: who.session })
          assert.strictEqual(answer.status, 404)
          assert.strictEqual(answer.body.error.code, "passkey_not_found")
        }
        assert.strictEqual(
          (yield* call("/v1/account/passkeys", { headers: colleague.session })).body.passkeys.length,
          0
        )
        assert.strictEqual(
          (yield* call("/v1/account/passkeys", { headers: member.session })).body.passkeys.length,
          1
        )
      })
    )

    it.effect("refuses an API key on the account passkey routes with 401 identity_unauthorized", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const apiKey = { authorization: `Bearer ${member.apiKey}` }
        for (const [method, path, body] of [
          ["POST", "/v1/account/passkeys/options", {}],
          ["POST", "/v1/account/passkeys", undefined],
          ["GET", "/v1/account/passkeys", undefined],
          ["DELETE", "/v1/account/passkeys/pk_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b", undefined]
        ] as const) {
          const answer = yield* call(path, {
            method,
            headers: apiKey,
            ...(method === "POST" ? { body: body ?? { challenge_id: "x" } } : {})
          })
          assert.strictEqual(answer.status, method === "POST" && body === undefined ? 400 : 401, path)
          if (answer.status === 401) assert.strictEqual(answer.body.error.code, "identity_unauthorized")
        }
        // Without a credential at all: the usual 401.
        const none = yield* call("/v1/account/passkeys")
        assert.strictEqual(none.status, 401)
        assert.strictEqual(none.body.error.code, "unauthenticated")
      })
    )

    it.effect("refuses unknown fields and malformed bodies with 400 naming the field", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const extra = yield* call("/v1/sign-in/passkey/options", { body: { email: "a@b.c" } })
        assert.strictEqual(extra.status, 400)
        assert.strictEqual(extra.body.error.code, "invalid_request")
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        const started = yield* call("/v1/account/passkeys/options", { headers: member.session, body: {} })
        const response = authenticator.register(started.body.options)
        for (const body of [
          { challenge_id: started.body.challenge_id, name: "x", response, admin: true },
          { challenge_id: started.body.challenge_id, name: "x", response: { ...response, extra: 1 } },
          { challenge_id: started.body.challenge_id, name: "", response },
          { challenge_id: "pk_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b", name: "x", response }
        ]) {
          const answer = yield* call("/v1/account/passkeys", { headers: member.session, body })
          assert.strictEqual(answer.status, 400)
          assert.strictEqual(answer.body.error.code, "invalid_request")
          assert.notStrictEqual(answer.body.error.message, REFUSED)
        }
        // None of them used the challenge: the honest answer still registers.
        const ok = yield* call("/v1/account/passkeys", {
          headers: member.session,
          body: { challenge_id: started.body.challenge_id, name: "x", response }
        })
        assert.strictEqual(ok.status, 201)
      })
    )

    it.effect("records every passkey sign-in attempt with its outcome, member and client", () =>
      Effect.gen(function* () {
        const { db } = yield* Fixture
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        assert.strictEqual((yield* signIn(authenticator)).status, 201)
        assertRefused(yield* signIn(authenticator, { origin: "https://evil.test" }))
        assertRefused(yield* postAssertion("0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b", WELL_FORMED_ASSERTION))
        const rows = yield* Effect.promise(() =>
          db.query<{ kind: string; outcome: string; email: string | null; member_id: string | null }>(
            "select kind, outcome, email, member_id from sign_in_attempts where client = $1 order by at, id",
            [client]
          )
        )
        const known = { email: member.email, member_id: member.memberId }
        const unknown = { email: null, member_id: null }
        assert.deepStrictEqual(rows.rows, [
          { kind: "passkey", outcome: "sent", ...unknown },
          { kind: "passkey", outcome: "signed_in", ...known },
          { kind: "passkey", outcome: "sent", ...unknown },
          { kind: "passkey", outcome: "refused: not_verified", ...known },
          { kind: "passkey", outcome: "refused: unknown_challenge", ...unknown }
        ])
      })
    )

    it.effect("limits passkey sign-in attempts per client: 429 rate_limited with Retry-After", () =>
      Effect.gen(function* () {
        const { db } = yield* Fixture
        const limit = 30
        for (let i = 0; i < limit; i++) yield* signInOptions
        const refused = yield* call("/v1/sign-in/passkey/options", { headers: forwardedFor(), body: {} })
        assert.strictEqual(refused.status, 429)
        assert.strictEqual(refused.body.error.code, "rate_limited")
        const { service } = yield* Fixture
        const res = yield* Effect.promise(() =>
          service.request("/v1/sign-in/passkey/options", {
            method: "POST",
            headers: { "content-type": "application/json", ...forwardedFor() },
            body: "{}"
          })
        )
        assert.strictEqual(res.status, 429)
        const retryAfter = Number(res.headers.get("retry-after"))
        assert.isTrue(retryAfter > 1 && retryAfter <= 15 * 60, String(retryAfter))
        // Another client is not held back by this one.
        client = `${client}0`
        assert.strictEqual(
          (yield* call("/v1/sign-in/passkey/options", { headers: forwardedFor(), body: {} })).status,
          200
        )
        const challenges = yield* Effect.promise(() =>
          db.query<{ n: number }>("select count(*)::int as n from sign_in_attempts where client = $1", [
            client.slice(0, -1)
          ])
        )
        assert.strictEqual(challenges.rows[0]?.n, limit)
      })
    )

    it.scoped(
      "outside the sandbox, answers plain HTTP on the passkey sign-in routes with 403 https_required",
      () =>
        Effect.gen(function* () {
          const { clock } = yield* Fixture
          const { database } = yield* Fixture
          const production = yield* scopedService({
            database,
            clock,
            config: {
              serviceEnv: "production",
              dashboardOrigin: Option.some(DASHBOARD),
              depositKeyMnemonic: Option.some(Redacted.make(generateMnemonic(english)))
            }
          })
          for (const path of ["/v1/sign-in/passkey/options", "/v1/sign-in/passkey"]) {
            const res = yield* Effect.promise(() =>
              production.request(path, {
                method: "POST",
                headers: {
                  "content-type": "application/json",
                  "x-forwarded-proto": "http",
                  ...forwardedFor()
                },
                body: JSON.stringify(
                  path.endsWith("options")
                    ? {}
                    : {
                        challenge_id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b",
                        response: WELL_FORMED_ASSERTION
                      }
                )
              })
            )
            assert.strictEqual(res.status, 403, path)
            assert.strictEqual(
              ((yield* Effect.promise(() => res.json())) as Answered).error.code,
              "https_required"
            )
          }
          const overHttps = yield* Effect.promise(() =>
            production.request("/v1/sign-in/passkey/options", {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-forwarded-proto": "https",
                ...forwardedFor()
              },
              body: "{}"
            })
          )
          assert.strictEqual(overHttps.status, 200)
        })
    )

    it.effect(
      "refuses bodies over 8 KiB on passkey sign-in and over 16 KiB on the account's passkey routes",
      () =>
        Effect.gen(function* () {
          const member = yield* newMember()
          const pad = (bytes: number) => ({ pad: "x".repeat(bytes) })
          for (const [path, headers, limit] of [
            ["/v1/sign-in/passkey", forwardedFor(), 8 * 1024],
            ["/v1/sign-in/passkey/options", forwardedFor(), 8 * 1024],
            ["/v1/account/passkeys", member.session, 16 * 1024],
            ["/v1/account/passkeys/options", member.session, 16 * 1024]
          ] as const) {
            const over = yield* call(path, { headers, body: pad(limit) })
            assert.strictEqual(over.status, 413, path)
            assert.strictEqual(over.body.error.code, "payload_too_large")
            // Just under the limit it is read, and refused for what it says (an unknown field), not for its size.
            const under = yield* call(path, { headers, body: pad(limit - 100) })
            assert.strictEqual(under.status, 400, path)
          }
        })
    )

    it.effect(
      "refuses a credential registered twice with 409, and a sign-in challenge used to register",
      () =>
        Effect.gen(function* () {
          const member = yield* newMember()
          const colleague = yield* newMember(member)
          const authenticator = new SoftwareAuthenticator(DASHBOARD)
          yield* registerPasskey(member, authenticator)
          const [credentialId] = [...authenticator.credentials.keys()]
          for (const who of [member, colleague]) {
            const started = yield* call("/v1/account/passkeys/options", { headers: who.session, body: {} })
            const again = yield* call("/v1/account/passkeys", {
              headers: who.session,
              body: {
                challenge_id: started.body.challenge_id,
                name: "Again",
                response: authenticator.register(started.body.options, { credentialId: credentialId! })
              }
            })
            assert.strictEqual(again.status, 409)
            assert.strictEqual(again.body.error.code, "invalid_state")
          }
          const signInChallenge = yield* signInOptions
          const registration = yield* call("/v1/account/passkeys/options", {
            headers: member.session,
            body: {}
          })
          assertRefused(
            yield* call("/v1/account/passkeys", {
              headers: member.session,
              body: {
                challenge_id: signInChallenge.challengeId,
                name: "Crossed",
                response: authenticator.register({
                  ...registration.body.options,
                  challenge: signInChallenge.options.challenge
                })
              }
            })
          )
          assert.strictEqual(
            (yield* call("/v1/account/passkeys", { headers: member.session })).body.passkeys.length,
            1
          )
          assert.strictEqual(
            (yield* call("/v1/account/passkeys", { headers: colleague.session })).body.passkeys.length,
            0
          )
        })
    )

    it.effect("lets one of two racing answers sign in: on one challenge, or with one counter on two", () =>
      Effect.gen(function* () {
        const member = yield* newMember()
        const authenticator = new SoftwareAuthenticator(DASHBOARD)
        yield* registerPasskey(member, authenticator)
        const statuses = (answers: ReadonlyArray<Answer>) => answers.map((a) => a.status).sort()

        // Four rounds of three attempts, then four of four: under the client's limit of 30 each.
        for (let round = 0; round < 4; round++) {
          const { challengeId, options } = yield* signInOptions
          const assertion = authenticator.authenticate(options)
          const answers = yield* Effect.all(
            [postAssertion(challengeId, assertion), postAssertion(challengeId, assertion)],
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(statuses(answers), [201, 400])
        }

        client = `${client}0`
        for (let round = 0; round < 4; round++) {
          const first = yield* signInOptions
          const second = yield* signInOptions
          const a = authenticator.authenticate(first.options)
          // A clone of the authenticator answers the other challenge with the very same counter.
          const b = authenticator.authenticate(second.options, {
            counter: authenticator.credentials.values().next().value!.counter
          })
          const answers = yield* Effect.all(
            [postAssertion(first.challengeId, a), postAssertion(second.challengeId, b)],
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(statuses(answers), [201, 400])
        }
      })
    )
  })
})
