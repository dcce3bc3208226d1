import { randomUUID } from "node:crypto"
import { Option } from "effect"
import pg from "pg"
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ReceivedMail, startSmtpInbox } from "../../support/SmtpInbox"
import { typedData } from "../../../services/payer/WalletAttestation"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

let smtp: Awaited<ReturnType<typeof startSmtpInbox>>
let inbox: ReadonlyArray<ReceivedMail> = []
let service: RunningService
let api: MerchantClient
let refs: { issuerId: string; payoutAddressId: string }

beforeAll(async () => {
  smtp = await startSmtpInbox()
  inbox = smtp.inbox
  service = await startService({
    config: { smtpUrl: Option.some(smtp.url), rateLimitCapacity: 10_000 }
  })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
  refs = await api.setup()
})
afterAll(async () => {
  await service?.stop()
  await smtp?.close()
})

const payer = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
  const res = await service.request(path, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
  })
  return { status: res.status, body: (await res.json()) as T & { error: { code: string; param?: string } } }
}

const createMailboxRequest = (email: string) =>
  api.call<{ id: string }>(
    "POST",
    "/v1/deposit-requests",
    {
      amount: "3.000000",
      issuer_id: refs.issuerId,
      payout_address_id: refs.payoutAddressId,
      payer_policy_mode: "mailbox",
      expected_email: email
    },
    { "idempotency-key": randomUUID() }
  )

/** The wallet route's body: the statement for `wallet`, signed by `signer` (the wallet itself unless given). */
const attestation = async (id: string, wallet: LocalAccount, signer: LocalAccount = wallet) => {
  const expiresAt = Math.floor(Date.now() / 1000) + 600
  const statement = { depositRequest: id, wallet: wallet.address, chainId: 10143, expiresAt }
  return {
    wallet: wallet.address,
    chain_id: 10143,
    expires_at: expiresAt,
    signature: await signer.signTypedData(typedData(statement))
  }
}

const codeFor = (email: string) => {
  const mail = [...inbox].reverse().find((m) => m.to === email)
  const match = mail?.raw.match(/one-time code is (\d{6})/)
  if (!match?.[1]) throw new Error(`no code mailed to ${email}`)
  return match[1]
}

describe("the mailbox proof", () => {
  it("mails a code to the expected mailbox, refuses a wrong one, accepts the right one once, then the wallet", async () => {
    const email = `payer-${randomUUID().slice(0, 8)}@example.com`
    const made = await createMailboxRequest(email)
    const path = `/v1/payer/deposit-requests/${made.body.id}`
    const view = await payer("GET", path)
    expect(view.body).toMatchObject({ proof_required: "mailbox" })
    expect(JSON.stringify(view.body)).not.toContain(email)

    const started = await payer<{ sent_to: string }>("POST", `${path}/mailbox/start`)
    expect(started.status).toBe(202)
    expect(started.body.sent_to).toBe(`${email[0]}***@example.com`)
    const code = codeFor(email)

    const wrong = await payer("POST", `${path}/mailbox/verify`, {
      code: code === "000000" ? "111111" : "000000"
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.param).toBe("code")
    const ok = await payer("POST", `${path}/mailbox/verify`, { code })
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ proof_required: null, wallet_required: true })
    const reused = await payer("POST", `${path}/mailbox/verify`, { code })
    expect(reused.status).toBe(409)

    const account = privateKeyToAccount(generatePrivateKey())
    const ready = await payer("POST", `${path}/wallet`, await attestation(made.body.id, account))
    expect(ready.body).toMatchObject({ status: "ready" })
    const attempts = await api.call<{ verification_completed_at: string | null }>(
      "GET",
      `/v1/deposit-requests/${made.body.id}`
    )
    expect(attempts.body.verification_completed_at).toMatch(/Z$/)
  })

  it("bounds the codes mailed per request", async () => {
    const email = `bounded-${randomUUID().slice(0, 8)}@example.com`
    const made = await createMailboxRequest(email)
    const path = `/v1/payer/deposit-requests/${made.body.id}/mailbox/start`
    for (let i = 0; i < 5; i++) expect((await payer("POST", path)).status).toBe(202)
    const sixth = await payer("POST", path)
    expect(sixth.status).toBe(429)
    expect(inbox.filter((m) => m.to === email)).toHaveLength(5)
  })

  it("bounds the codes mailed per request when the sends arrive together", async () => {
    const email = `burst-${randomUUID().slice(0, 8)}@example.com`
    const made = await createMailboxRequest(email)
    const path = `/v1/payer/deposit-requests/${made.body.id}/mailbox/start`
    const answers = await Promise.all(Array.from({ length: 15 }, () => payer("POST", path)))
    expect(answers.filter((a) => a.status === 202)).toHaveLength(5)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(10)
    expect(await attemptsOf(made.body.id, "mailbox_send")).toEqual({ accepted: 5 })
  })
})

/** A request's verification attempts of one kind, counted by outcome, straight from the database. */
const attemptsOf = async (id: string, kind: string): Promise<Record<string, number>> => {
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
}

/** Thirty wrong proofs at once, then the right one: exactly five refusals counted, the rest and the right one 429. */
const expectLockoutUnderBurst = async (
  id: string,
  kind: string,
  send: (right: boolean) => Promise<{ status: number }>
) => {
  const answers = await Promise.all(Array.from({ length: 30 }, () => send(false)))
  expect(answers.filter((a) => a.status === 400)).toHaveLength(5)
  expect(answers.filter((a) => a.status === 429)).toHaveLength(25)
  expect(await attemptsOf(id, kind)).toEqual({ refused: 5 })
  expect((await send(true)).status).toBe(429)
  expect(await attemptsOf(id, kind)).toEqual({ refused: 5 })
}

describe("the five-refusal lockout under a burst of guesses", () => {
  it("holds for mailbox codes", async () => {
    const email = `guess-${randomUUID().slice(0, 8)}@example.com`
    const made = await createMailboxRequest(email)
    const path = `/v1/payer/deposit-requests/${made.body.id}`
    expect((await payer("POST", `${path}/mailbox/start`)).status).toBe(202)
    const code = codeFor(email)
    const wrong = code === "000000" ? "111111" : "000000"
    await expectLockoutUnderBurst(made.body.id, "mailbox_code", (right) =>
      payer("POST", `${path}/mailbox/verify`, { code: right ? code : wrong })
    )
  })

  it("holds for merchant-session secrets", async () => {
    const made = await api.call<{ id: string; merchant_session_secret: string }>(
      "POST",
      "/v1/deposit-requests",
      {
        amount: "3.000000",
        issuer_id: refs.issuerId,
        payout_address_id: refs.payoutAddressId,
        payer_policy_mode: "merchant_session"
      },
      { "idempotency-key": randomUUID() }
    )
    const path = `/v1/payer/deposit-requests/${made.body.id}/merchant-session`
    await expectLockoutUnderBurst(made.body.id, "merchant_session", (right) =>
      payer("POST", path, { secret: right ? made.body.merchant_session_secret : `wrong-${randomUUID()}` })
    )
  })

  it("holds for wallet attestations", async () => {
    const made = await api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    const account = privateKeyToAccount(generatePrivateKey())
    const good = await attestation(made.body.id, account)
    // Signed by another key than the wallet it names: refused as a wrong signature.
    const bad = await attestation(made.body.id, account, privateKeyToAccount(generatePrivateKey()))
    await expectLockoutUnderBurst(made.body.id, "wallet", (right) =>
      payer("POST", `/v1/payer/deposit-requests/${made.body.id}/wallet`, right ? good : bad)
    )
  })
})
