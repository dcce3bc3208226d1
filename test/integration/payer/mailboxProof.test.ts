import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts"
import { typedData } from "../../../services/payer/WalletAttestation"
import { Inbox, mailingSandboxLayer } from "../../support/MailingSandbox"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { Sandbox, sandboxCall, sandboxPayerCall } from "../../support/Sandbox"

const Live = sandboxWithReferences(mailingSandboxLayer({ config: { rateLimitCapacity: 10_000 } }))

/** A payer's call (no credentials) to the service. */
const payer = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
  sandboxPayerCall<T & { error: { code: string; param?: string } }>(method, path, body)

const call = sandboxCall

/** A request of the merchant's with this payer policy (and the extra fields it needs). */
const createRequest = <T extends { id: string }>(extra: Record<string, unknown>) =>
  Effect.flatMap(MerchantReferences, (refs) =>
    call<T>(
      "POST",
      "/v1/deposit-requests",
      { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...extra },
      { "idempotency-key": randomUUID() }
    )
  )

const createMailboxRequest = (email: string) =>
  createRequest<{ id: string }>({ payer_policy_mode: "mailbox", expected_email: email })

/** The wallet route's body: the statement for `wallet`, signed by `signer` (the wallet itself unless given). */
const attestation = (id: string, wallet: LocalAccount, signer: LocalAccount = wallet) =>
  Effect.promise(async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 600
    const statement = { depositRequest: id, wallet: wallet.address, chainId: 10143, expiresAt }
    return {
      wallet: wallet.address,
      chain_id: 10143,
      expires_at: expiresAt,
      signature: await signer.signTypedData(typedData(statement))
    }
  })

/** The one-time code last mailed to `email`. */
const codeFor = (email: string) =>
  Effect.map(Inbox, (inbox) => {
    const mail = [...inbox].reverse().find((m) => m.to === email)
    const match = mail?.raw.match(/one-time code is (\d{6})/)
    if (!match?.[1]) throw new Error(`no code mailed to ${email}`)
    return match[1]
  })

/** A request's verification attempts of one kind, counted by outcome, straight from the database. */
const attemptsOf = (id: string, kind: string) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async (): Promise<Record<string, number>> => {
      const client = new pg.Client({ connectionString: service.databaseUrl })
      await client.connect()
      try {
        const rows = await client.query<{ outcome: string; n: number }>(
          `select outcome, count(*)::int as n from verification_attempts
           where deposit_request_id = $1 and kind = $2 group by outcome`,
          [id.slice(3), kind]
        )
        return Object.fromEntries(rows.rows.map((r) => [r.outcome, r.n]))
      } finally {
        await client.end()
      }
    })
  )

/** All of these at once. */
const together = <A, E, R>(count: number, effect: () => Effect.Effect<A, E, R>) =>
  Effect.all(Array.from({ length: count }, effect), { concurrency: "unbounded" })

/** Thirty wrong proofs at once, then the right one: exactly five refusals counted, the rest and the right one 429. */
const assertLockoutUnderBurst = <R>(
  id: string,
  kind: string,
  send: (right: boolean) => Effect.Effect<{ status: number }, never, R>
) =>
  Effect.gen(function* () {
    const answers = yield* together(30, () => send(false))
    assert.lengthOf(
      answers.filter((a) => a.status === 400),
      5
    )
    assert.lengthOf(
      answers.filter((a) => a.status === 429),
      25
    )
    assert.deepStrictEqual(yield* attemptsOf(id, kind), { refused: 5 })
    assert.strictEqual((yield* send(true)).status, 429)
    assert.deepStrictEqual(yield* attemptsOf(id, kind), { refused: 5 })
  })

layer(Live, { timeout: 120_000 })((it) => {
  describe("the mailbox proof", () => {
    it.effect(
      "mails a code to the expected mailbox, refuses a wrong one, accepts the right one once, then the wallet",
      () =>
        Effect.gen(function* () {
          const email = `payer-${randomUUID().slice(0, 8)}@example.com`
          const made = yield* createMailboxRequest(email)
          const path = `/v1/payer/deposit-requests/${made.body.id}`
          const view = yield* payer("GET", path)
          assert.deepInclude(view.body, { proof_required: "mailbox" })
          assert.notInclude(JSON.stringify(view.body), email)

          const started = yield* payer<{ sent_to: string }>("POST", `${path}/mailbox/start`)
          assert.strictEqual(started.status, 202)
          assert.strictEqual(started.body.sent_to, `${email[0]}***@example.com`)
          const code = yield* codeFor(email)

          const wrong = yield* payer("POST", `${path}/mailbox/verify`, {
            code: code === "000000" ? "111111" : "000000"
          })
          assert.strictEqual(wrong.status, 400)
          assert.strictEqual(wrong.body.error.param, "code")
          const ok = yield* payer("POST", `${path}/mailbox/verify`, { code })
          assert.strictEqual(ok.status, 200)
          assert.deepInclude(ok.body, { proof_required: null, wallet_required: true })
          const reused = yield* payer("POST", `${path}/mailbox/verify`, { code })
          assert.strictEqual(reused.status, 409)

          const account = privateKeyToAccount(generatePrivateKey())
          const ready = yield* payer("POST", `${path}/wallet`, yield* attestation(made.body.id, account))
          assert.deepInclude(ready.body, { status: "ready" })
          const attempts = yield* call<{ verification_completed_at: string | null }>(
            "GET",
            `/v1/deposit-requests/${made.body.id}`
          )
          assert.match(attempts.body.verification_completed_at as string, /Z$/)
        })
    )

    it.effect("bounds the codes mailed per request", () =>
      Effect.gen(function* () {
        const email = `bounded-${randomUUID().slice(0, 8)}@example.com`
        const made = yield* createMailboxRequest(email)
        const path = `/v1/payer/deposit-requests/${made.body.id}/mailbox/start`
        for (let i = 0; i < 5; i++) assert.strictEqual((yield* payer("POST", path)).status, 202)
        const sixth = yield* payer("POST", path)
        assert.strictEqual(sixth.status, 429)
        const inbox = yield* Inbox
        assert.lengthOf(
          inbox.filter((m) => m.to === email),
          5
        )
      })
    )

    it.effect("bounds the codes mailed per request when the sends arrive together", () =>
      Effect.gen(function* () {
        const email = `burst-${randomUUID().slice(0, 8)}@example.com`
        const made = yield* createMailboxRequest(email)
        const path = `/v1/payer/deposit-requests/${made.body.id}/mailbox/start`
        const answers = yield* together(15, () => payer("POST", path))
        assert.lengthOf(
          answers.filter((a) => a.status === 202),
          5
        )
        assert.lengthOf(
          answers.filter((a) => a.status === 429),
          10
        )
        assert.deepStrictEqual(yield* attemptsOf(made.body.id, "mailbox_send"), { accepted: 5 })
      })
    )
  })

  describe("the five-refusal lockout under a burst of guesses", () => {
    it.effect("holds for mailbox codes", () =>
      Effect.gen(function* () {
        const email = `guess-${randomUUID().slice(0, 8)}@example.com`
        const made = yield* createMailboxRequest(email)
        const path = `/v1/payer/deposit-requests/${made.body.id}`
        assert.strictEqual((yield* payer("POST", `${path}/mailbox/start`)).status, 202)
        const code = yield* codeFor(email)
        const wrong = code === "000000" ? "111111" : "000000"
        yield* assertLockoutUnderBurst(made.body.id, "mailbox_code", (right) =>
          payer("POST", `${path}/mailbox/verify`, { code: right ? code : wrong })
        )
      })
    )

    it.effect("holds for merchant-session secrets", () =>
      Effect.gen(function* () {
        const made = yield* createRequest<{ id: string; merchant_session_secret: string }>({
          payer_policy_mode: "merchant_session"
        })
        const path = `/v1/payer/deposit-requests/${made.body.id}/merchant-session`
        yield* assertLockoutUnderBurst(made.body.id, "merchant_session", (right) =>
          payer("POST", path, { secret: right ? made.body.merchant_session_secret : `wrong-${randomUUID()}` })
        )
      })
    )

    it.effect("holds for wallet attestations", () =>
      Effect.gen(function* () {
        const made = yield* createRequest<{ id: string }>({})
        const account = privateKeyToAccount(generatePrivateKey())
        const good = yield* attestation(made.body.id, account)
        // Signed by another key than the wallet it names: refused as a wrong signature.
        const bad = yield* attestation(made.body.id, account, privateKeyToAccount(generatePrivateKey()))
        yield* assertLockoutUnderBurst(made.body.id, "wallet", (right) =>
          payer("POST", `/v1/payer/deposit-requests/${made.body.id}/wallet`, right ? good : bad)
        )
      })
    )
  })
})
