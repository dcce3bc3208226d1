import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON
} from "@simplewebauthn/server"
import { Effect, Option } from "effect"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { DepositRequestEvent } from "../../../machines/step"
import { ActorHost } from "../../../services/actors/ActorHost"
import { typedData } from "../../../services/payer/WalletAttestation"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { createMerchant } from "../../support/Merchant"
import { freePort } from "../../support/Process"
import { type RunningService, startService } from "../../support/Service"
import { decodedMail, startSmtpInbox } from "../../support/SmtpInbox"
import { SoftwareAuthenticator } from "../../support/SoftwareAuthenticator"

/**
 * Issue 51, items 1 and 4: Stoplight Prism as a validating proxy over traffic on every operation of the served
 * document (each one's success answer, and the error answers that can be provoked), with bodies and declared headers
 * checked. The list of operations comes from the document, so an operation without traffic fails the test. A
 * second Prism stands in front of an upstream that answers each recorded success with one declared property of the
 * wrong type (or, for answers without a JSON body, without a required header): Prism must flag every one.
 */
type Json = Record<string, unknown>
interface Operation {
  readonly key: string
  readonly method: string
  readonly template: string
  readonly match: RegExp
  readonly secured: boolean
  readonly responses: Record<string, { content?: Record<string, { schema?: Json }>; headers?: Json }>
  readonly parameters: ReadonlyArray<Json>
  readonly requestBody: { content?: Record<string, { schema?: Json }> } | undefined
}
interface Exchange {
  readonly op: Operation
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
  readonly status: number
  readonly answerHeaders: Record<string, string>
  readonly answer: string
}
interface Violation {
  readonly location: ReadonlyArray<string>
  readonly severity: string
  readonly code: string | number
  readonly message: string
}

const DASHBOARD = "https://dashboard.example.test"
const WEBHOOK_HOST = "shop.example.com"
/** A payout address added during the run is held this long (the cancel route acts on a held one only). */
const HOLD_SECONDS = 4

let service: RunningService
let spec: Json
let operations: ReadonlyArray<Operation>
let dir: string
let db: pg.Client
let prism: string
let prismOnPlanted: string
let planted: Server
const children: Array<ChildProcess> = []
const closers: Array<() => Promise<void>> = []
let inbox: ReadonlyArray<{ readonly to: string; readonly raw: string }>
let receiverPort = 0
/** Every call the traffic made through Prism, in order; the planted test replays the first success of each. */
const exchanges: Array<Exchange> = []
/** What the planting upstream answers, by method and decoded URL. */
const plantedAnswers = new Map<
  string,
  { readonly status: number; readonly headers: Record<string, string>; readonly body: string }
>()

const startPrism = async (upstream: string) => {
  const port = await freePort()
  const child = spawn(
    "node_modules/.bin/prism",
    ["proxy", join(dir, "openapi.json"), upstream, "-p", String(port), "-h", "127.0.0.1", "--errors=false"],
    // Its stdout is read (the request log would fill an unread pipe and stall it); stderr is not kept.
    { stdio: ["ignore", "pipe", "ignore"] }
  )
  children.push(child)
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("Prism did not start")), 60_000)
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("Prism is listening")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on("exit", (code) => reject(new Error(`Prism exited ${code}`)))
  })
  return `http://127.0.0.1:${port}`
}

/** Every operation of the document, with a matcher for its path (literal segments win over `{id}`). */
const operationsOf = (document: Json): ReadonlyArray<Operation> =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([, op]) => typeof op === "object" && op !== null && "responses" in op)
      .map(([method, op]) => ({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        match: new RegExp(`^${template.replace(/\./g, "\\.").replace(/\{\w+\}/g, "[^/]+")}$`),
        secured: Array.isArray(op.security) && op.security.length > 0,
        responses: op.responses as Operation["responses"],
        parameters: (op.parameters ?? []) as ReadonlyArray<Json>,
        requestBody: op.requestBody as Operation["requestBody"]
      }))
  )

const operationFor = (method: string, url: string): Operation => {
  const path = url.split("?")[0]!
  const found = operations
    .filter((op) => op.method === method && op.match.test(path))
    .sort((a, b) => a.template.split("{").length - b.template.split("{").length)[0]
  if (found === undefined) throw new Error(`no operation for ${method} ${path}`)
  return found
}

const resolveSchema = (schema: Json | undefined): Json | undefined => {
  if (schema === undefined || typeof schema.$ref !== "string") return schema
  const name = schema.$ref.split("/").pop()!
  return resolveSchema(((spec.components as Json).schemas as Json)[name] as Json)
}

const wellFormed = (prefix: string) => `${prefix}_${randomUUID()}`

beforeAll(async () => {
  const certificates = makeCertificates(WEBHOOK_HOST)
  const receiver = await startReceiver(certificates)
  closers.push(receiver.close)
  const smtp = await startSmtpInbox()
  closers.push(smtp.close)
  inbox = smtp.inbox
  service = await startService({
    webhookNetwork: localReceiverNetwork(WEBHOOK_HOST, certificates.ca),
    config: {
      rateLimitCapacity: 100_000,
      smtpUrl: Option.some(smtp.url),
      dashboardOrigin: Option.some(DASHBOARD),
      payoutAddressHoldSeconds: Option.some(HOLD_SECONDS),
      webhookFirstRetryMs: 300
    }
  })
  receiverPort = receiver.port
  db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
  spec = (await (await service.request("/openapi.json")).json()) as Json
  operations = operationsOf(spec)
  dir = mkdtempSync(join(tmpdir(), "prism-traffic-"))
  writeFileSync(join(dir, "openapi.json"), JSON.stringify(spec))
  planted = createServer((req, res) => {
    // Prism may re-encode the query on its way.
    const exchange = plantedAnswers.get(`${req.method} ${decodeURIComponent(req.url ?? "")}`)
    req.resume()
    if (exchange === undefined) {
      res.writeHead(599).end()
      return
    }
    res.writeHead(exchange.status, exchange.headers).end(exchange.body)
  }).listen(0, "127.0.0.1")
  await new Promise((resolve) => planted.once("listening", resolve))
  ;[prism, prismOnPlanted] = await Promise.all([
    startPrism(service.baseUrl),
    startPrism(`http://127.0.0.1:${(planted.address() as AddressInfo).port}`)
  ])
}, 180_000)

afterAll(async () => {
  for (const child of children) child.kill()
  planted?.close()
  await db?.end()
  await service?.stop()
  for (const close of closers) await close()
})

/** One call through Prism, recorded with Prism's answer (and its `sl-violations`): status and JSON body. */
const send = async (
  method: string,
  url: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {}
) => {
  const headers: Record<string, string> = {
    ...(options.body === undefined && options.raw === undefined
      ? {}
      : { "content-type": "application/json" }),
    ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    ...options.headers
  }
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
  const res = await fetch(`${prism}${url}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await res.text()
  const answerHeaders: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    answerHeaders[name] = value
  })
  exchanges.push({
    op: operationFor(method, url),
    method,
    url,
    headers,
    body,
    status: res.status,
    answerHeaders,
    answer: text
  })
  const json =
    (res.headers.get("content-type") ?? "").includes("json") && text !== "" ? JSON.parse(text) : null
  return { status: res.status, body: json as Json }
}

/** `send`, and the answer must have this status. */
const expectStatus = async (status: number, ...args: Parameters<typeof send>) => {
  const answer = await send(...args)
  expect([args[0], args[1], answer.status, answer.body]).toEqual([
    args[0],
    args[1],
    status,
    answer.status === status ? answer.body : "(another status)"
  ])
  return answer.body
}

/** Exchanges of requests the document itself refuses (a shape, pattern or bound it states). */
const documentedRefusals = new Set<Exchange>()
/** `expectStatus(400, …)` for a request whose fault the document states: Prism must name it too. */
const refusedAsDocumented = async (...args: Parameters<typeof send>) => {
  const body = await expectStatus(400, ...args)
  documentedRefusals.add(exchanges[exchanges.length - 1]!)
  return body
}

const mailsTo = (email: string) => inbox.filter((m) => m.to === email).map((m) => decodedMail(m.raw))
const nthMail = async (email: string, n: number) => {
  const until = Date.now() + 10_000
  while (mailsTo(email).length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  const mail = mailsTo(email)[n - 1]
  if (mail === undefined) throw new Error(`mail ${n} to ${email} did not arrive`)
  return mail
}
const found = (pattern: RegExp, text: string) => {
  const match = pattern.exec(text)?.[1]
  if (match === undefined) throw new Error(`${pattern} not in ${text.slice(0, 200)}`)
  return match
}

const apply = (id: string, event: DepositRequestEvent) =>
  service.runtime.runPromise(
    Effect.flatMap(ActorHost, (host) => host.apply(id.slice(3), `${event.type}-${randomUUID()}`, event)).pipe(
      Effect.orDie
    )
  )

const waitFor = async (check: () => Promise<boolean>, ms = 10_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("timed out waiting")
}

/** The whole merchant journey, through Prism: sign-up, members, keys, resources, requests, payers, webhooks. */
const traffic = async () => {
  await expectStatus(200, "GET", "/v1/health")

  // Sign-up by code (the sandbox opens an account for a new address), then sign-in by link.
  const owner = `owner-${randomUUID().slice(0, 8)}@${WEBHOOK_HOST}`
  const started = await expectStatus(202, "POST", "/v1/sign-in/email", { body: { email: owner } })
  await refusedAsDocumented("POST", "/v1/sign-in/email", { body: { email: "not an address" } })
  const code = found(/sign-in code is (\d{6})/, await nthMail(owner, 1))
  await expectStatus(400, "POST", "/v1/sign-in/email/verify", {
    body: { email: owner, code: code === "000000" ? "111111" : "000000", binding: started.binding }
  })
  const signedUp = await expectStatus(201, "POST", "/v1/sign-in/email/verify", {
    body: { email: owner, code, binding: started.binding }
  })
  let session = signedUp.session_token as string
  const memberId = (signedUp.member as { id: string }).id
  await expectStatus(202, "POST", "/v1/sign-in/email", { body: { email: owner } })
  const linkToken = found(/#sign-in=(signin_[A-Za-z0-9_-]+)/, await nthMail(owner, 2))
  await expectStatus(200, "POST", "/v1/sign-in/link/preview", { body: { token: linkToken } })
  await expectStatus(400, "POST", "/v1/sign-in/link", { body: { token: linkToken } })
  const second = await expectStatus(201, "POST", "/v1/sign-in/link", {
    body: { token: linkToken, confirmed: true }
  })
  await expectStatus(400, "POST", "/v1/sign-in/link/preview", { body: { token: linkToken } })

  // The account, its key and sessions.
  await expectStatus(200, "GET", "/v1/account", { token: session })
  await expectStatus(401, "GET", "/v1/account", { token: "sk_test_nope" })
  await expectStatus(200, "GET", "/v1/account/summary?time_zone=Europe/Berlin", { token: session })
  await expectStatus(400, "GET", "/v1/account/summary?time_zone=Mars/Olympus", { token: session })
  await expectStatus(200, "GET", "/v1/account/api-key", { token: session })
  const issued = await expectStatus(201, "POST", "/v1/account/api-key", { token: session, body: {} })
  const key = issued.api_key as string
  await expectStatus(401, "GET", "/v1/account/api-key", { token: key })
  const refreshed = await expectStatus(201, "POST", "/v1/account/session", { token: session, body: {} })
  await expectStatus(401, "GET", "/v1/account", { token: session })
  session = refreshed.session_token as string

  // The member, notices, invitations, members and sessions.
  await expectStatus(200, "GET", "/v1/account/member", { token: session })
  const operator = await operatorSession()
  await expectStatus(404, "GET", "/v1/account/member", { token: operator })
  await expectStatus(200, "GET", "/v1/account/member/notices", { token: session })
  await expectStatus(200, "PATCH", "/v1/account/member/notices", {
    token: session,
    body: { request_paused: false }
  })
  await refusedAsDocumented("PATCH", "/v1/account/member/notices", { token: session, body: { paused: 1 } })
  const invitee = `invitee-${randomUUID().slice(0, 8)}@${WEBHOOK_HOST}`
  await expectStatus(201, "POST", "/v1/account/invites", { token: session, body: { email: invitee } })
  const inviteToken = found(/#invite=(invite_[A-Za-z0-9_-]+)/, await nthMail(invitee, 1))
  await expectStatus(200, "POST", "/v1/sign-in/invite/preview", { body: { token: inviteToken } })
  await expectStatus(400, "POST", "/v1/sign-in/invite", { body: { token: inviteToken } })
  const joined = await expectStatus(201, "POST", "/v1/sign-in/invite", {
    body: { token: inviteToken, confirmed: true }
  })
  await expectStatus(400, "POST", "/v1/sign-in/invite/preview", { body: { token: inviteToken } })
  await expectStatus(409, "POST", "/v1/account/invites", { token: session, body: { email: invitee } })
  const other = await expectStatus(201, "POST", "/v1/account/invites", {
    token: session,
    body: { email: `later-${randomUUID().slice(0, 8)}@${WEBHOOK_HOST}` }
  })
  await expectStatus(200, "GET", "/v1/account/invites", { token: session })
  await expectStatus(204, "DELETE", `/v1/account/invites/${other.id}`, { token: session })
  await expectStatus(200, "GET", "/v1/account/members", { token: session })
  await expectStatus(204, "DELETE", `/v1/account/members/${(joined.member as { id: string }).id}`, {
    token: session
  })
  // The last member stays.
  await expectStatus(409, "DELETE", `/v1/account/members/${memberId}`, { token: session })
  const sessions = await expectStatus(200, "GET", "/v1/account/sessions", { token: session })
  const ended = (sessions.sessions as Array<{ id: string; current: boolean }>).find((s) => !s.current)
  expect(ended, JSON.stringify(sessions)).toBeDefined()
  await expectStatus(204, "DELETE", `/v1/account/sessions/${ended!.id}`, { token: session })
  await expectStatus(401, "GET", "/v1/account", { token: second.session_token as string })
  await expectStatus(200, "GET", "/v1/account/audit-log?limit=5", { token: session })
  await refusedAsDocumented("GET", "/v1/account/audit-log?limit=0", { token: session })

  // Passkeys: registered, listed, signed in with, removed.
  const authenticator = new SoftwareAuthenticator(DASHBOARD)
  const registration = await expectStatus(200, "POST", "/v1/account/passkeys/options", {
    token: session,
    body: {}
  })
  await expectStatus(404, "POST", "/v1/account/passkeys/options", { token: operator, body: {} })
  const passkey = await expectStatus(201, "POST", "/v1/account/passkeys", {
    token: session,
    body: {
      challenge_id: registration.challenge_id,
      name: "Laptop",
      response: authenticator.register(registration.options as PublicKeyCredentialCreationOptionsJSON)
    }
  })
  await expectStatus(200, "GET", "/v1/account/passkeys", { token: session })
  const assertion = await expectStatus(200, "POST", "/v1/sign-in/passkey/options", { body: {} })
  await expectStatus(201, "POST", "/v1/sign-in/passkey", {
    body: {
      challenge_id: assertion.challenge_id,
      response: authenticator.authenticate(assertion.options as PublicKeyCredentialRequestOptionsJSON)
    }
  })
  await expectStatus(400, "POST", "/v1/sign-in/passkey", {
    body: {
      challenge_id: assertion.challenge_id,
      response: authenticator.authenticate(assertion.options as PublicKeyCredentialRequestOptionsJSON)
    }
  })
  await expectStatus(204, "DELETE", `/v1/account/passkeys/${passkey.id}`, { token: session })
  await expectStatus(404, "DELETE", `/v1/account/passkeys/${passkey.id}`, { token: session })

  // Issuers, customers, payout addresses.
  const issuer = await expectStatus(201, "POST", "/v1/issuers", {
    token: key,
    body: { display_name: "Acme" }
  })
  await refusedAsDocumented("POST", "/v1/issuers", { token: key, body: { display_name: "" } })
  await expectStatus(200, "GET", "/v1/issuers?limit=5", { token: key })
  await expectStatus(200, "GET", `/v1/issuers/${issuer.id}`, { token: key })
  await expectStatus(200, "PATCH", `/v1/issuers/${issuer.id}`, {
    token: key,
    body: { legal_name: "Acme Ltd." }
  })
  const spareIssuer = await expectStatus(201, "POST", "/v1/issuers", {
    token: key,
    body: { display_name: "Old" }
  })
  await expectStatus(204, "DELETE", `/v1/issuers/${spareIssuer.id}`, { token: key })

  const customer = await expectStatus(201, "POST", "/v1/customers", {
    token: key,
    body: { name: "Ada", email: "ada@example.com" }
  })
  await refusedAsDocumented("POST", "/v1/customers", { token: key, body: { email: "nope" } })
  await expectStatus(200, "GET", "/v1/customers?limit=5", { token: key })
  await expectStatus(200, "GET", `/v1/customers/${customer.id}`, { token: key })
  await expectStatus(200, "PATCH", `/v1/customers/${customer.id}`, {
    token: key,
    body: { description: null }
  })
  const spareCustomer = await expectStatus(201, "POST", "/v1/customers", { token: key, body: { name: "Bo" } })
  await expectStatus(204, "DELETE", `/v1/customers/${spareCustomer.id}`, { token: key })

  const payout = await expectStatus(201, "POST", "/v1/payout-addresses", {
    token: key,
    body: { address: "0x52908400098527886e0f7030069857d2e4169ee7" }
  })
  const heldAt = Date.now()
  const secondPayout = await expectStatus(201, "POST", "/v1/payout-addresses", {
    token: key,
    body: { address: "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720", label: "Second" }
  })
  await refusedAsDocumented("POST", "/v1/payout-addresses", { token: key, body: { address: "0x123" } })
  await expectStatus(200, "GET", "/v1/payout-addresses?limit=5", { token: key })
  await expectStatus(200, "GET", `/v1/payout-addresses/${payout.id}`, { token: key })
  await expectStatus(200, "PATCH", `/v1/payout-addresses/${payout.id}`, {
    token: key,
    body: { label: "Main" }
  })
  const cancelled = await expectStatus(201, "POST", "/v1/payout-addresses", {
    token: key,
    body: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }
  })
  await expectStatus(200, "POST", `/v1/payout-addresses/${cancelled.id}/cancel`, { token: session })
  await expectStatus(409, "POST", `/v1/payout-addresses/${cancelled.id}/cancel`, { token: session })
  await new Promise((r) => setTimeout(r, Math.max(0, heldAt + HOLD_SECONDS * 1000 + 1000 - Date.now())))

  // A listener opened before the requests, so their events reach it.
  const listener = await expectStatus(201, "POST", "/v1/webhook-listeners", { token: key, body: {} })
  await refusedAsDocumented("POST", "/v1/webhook-listeners", {
    token: key,
    body: { event_types: ["no.such"] }
  })

  // Deposit requests.
  const idempotency = randomUUID()
  const create = {
    amount: "25.000000",
    issuer_id: issuer.id,
    payout_address_id: payout.id,
    heading: "Order 1"
  }
  const request = await expectStatus(201, "POST", "/v1/deposit-requests", {
    token: key,
    body: create,
    headers: { "idempotency-key": idempotency }
  })
  await expectStatus(200, "POST", "/v1/deposit-requests", {
    token: key,
    body: create,
    headers: { "idempotency-key": idempotency }
  })
  await expectStatus(409, "POST", "/v1/deposit-requests", {
    token: key,
    body: { ...create, amount: "26.000000" },
    headers: { "idempotency-key": idempotency }
  })
  await refusedAsDocumented("POST", "/v1/deposit-requests", {
    token: key,
    body: { ...create, amount: "1.5x" },
    headers: { "idempotency-key": randomUUID() }
  })
  await expectStatus(404, "POST", "/v1/deposit-requests", {
    token: key,
    body: { ...create, issuer_id: wellFormed("iss") },
    headers: { "idempotency-key": randomUUID() }
  })
  await expectStatus(413, "POST", "/v1/deposit-requests", {
    token: key,
    raw: JSON.stringify({ ...create, heading: "x".repeat(2 * 1024 * 1024) }),
    headers: { "idempotency-key": randomUUID() }
  })
  const createOne = async (extra: Json = {}) =>
    expectStatus(201, "POST", "/v1/deposit-requests", {
      token: key,
      body: { amount: "3.000000", issuer_id: issuer.id, payout_address_id: payout.id, ...extra },
      headers: { "idempotency-key": randomUUID() }
    })
  const id = request.id as string
  await expectStatus(200, "GET", "/v1/deposit-requests?limit=5", { token: key })
  await refusedAsDocumented("GET", "/v1/deposit-requests?limit=101", { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}`, { token: key })
  await expectStatus(200, "PATCH", `/v1/deposit-requests/${id}`, {
    token: key,
    body: { heading: "Order 1 (2 items)", metadata: { channel: "web" } }
  })
  await expectStatus(200, "GET", "/v1/deposit-requests/export.csv", { token: key })
  await refusedAsDocumented("GET", "/v1/deposit-requests/export.csv?created_gte=yesterday", { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/transfers`, { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/recoveries`, { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/deliveries`, { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/verification-attempts`, { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/steps`, { token: key })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/steps/stately`, { token: key })
  await expectStatus(200, "GET", `/v1/lifecycle/steps/find?q=${id}`, { token: key })
  await expectStatus(404, "GET", `/v1/lifecycle/steps/find?q=${wellFormed("dr")}`, { token: key })
  await refusedAsDocumented("GET", "/v1/lifecycle/steps/find", { token: key })
  await expectStatus(200, "GET", "/v1/lifecycle/steps?limit=5", { token: key })
  await expectStatus(200, "GET", "/v1/lifecycle/machine", { token: key })
  await expectStatus(200, "GET", "/v1/lifecycle/machine/definition", { token: key })
  await expectStatus(200, "GET", "/v1/reconciliation", { token: key })
  await refusedAsDocumented("GET", "/v1/reconciliation?created_from=yesterday", { token: key })

  // Payers: the read, each proof, the wallet.
  const payerPath = `/v1/payer/deposit-requests/${id}`
  await expectStatus(200, "GET", payerPath)
  await expectStatus(409, "POST", `${payerPath}/mailbox/start`)
  const wallet = privateKeyToAccount(generatePrivateKey())
  const attestation = async (requestId: string) => {
    const expiresAt = Math.floor(Date.now() / 1000) + 600
    return {
      wallet: wallet.address,
      chain_id: 10143,
      expires_at: expiresAt,
      signature: await wallet.signTypedData(
        typedData({ depositRequest: requestId, wallet: wallet.address, chainId: 10143, expiresAt })
      )
    }
  }
  await refusedAsDocumented("POST", `${payerPath}/wallet`, {
    body: { ...(await attestation(id)), chain_id: 1 }
  })
  await expectStatus(200, "POST", `${payerPath}/wallet`, { body: await attestation(id) })
  const payerMail = `payer-${randomUUID().slice(0, 8)}@example.com`
  const mailbox = await createOne({ payer_policy_mode: "mailbox", expected_email: payerMail })
  await expectStatus(202, "POST", `/v1/payer/deposit-requests/${mailbox.id}/mailbox/start`)
  const payerCode = found(/one-time code is (\d{6})/, await nthMail(payerMail, 1))
  await expectStatus(400, "POST", `/v1/payer/deposit-requests/${mailbox.id}/mailbox/verify`, {
    body: { code: payerCode === "000000" ? "111111" : "000000" }
  })
  await expectStatus(200, "POST", `/v1/payer/deposit-requests/${mailbox.id}/mailbox/verify`, {
    body: { code: payerCode }
  })
  const guarded = await createOne({ payer_policy_mode: "merchant_session" })
  await expectStatus(400, "POST", `/v1/payer/deposit-requests/${guarded.id}/merchant-session`, {
    body: { secret: `wrong-${randomUUID()}` }
  })
  await expectStatus(200, "POST", `/v1/payer/deposit-requests/${guarded.id}/merchant-session`, {
    body: { secret: guarded.merchant_session_secret }
  })
  // Five wrong proofs lock the request's proofs for a while: 429 with Retry-After.
  const locked = await createOne({ payer_policy_mode: "merchant_session" })
  for (let i = 0; i < 5; i++)
    await expectStatus(400, "POST", `/v1/payer/deposit-requests/${locked.id}/merchant-session`, {
      body: { secret: `wrong-${i}` }
    })
  await expectStatus(429, "POST", `/v1/payer/deposit-requests/${locked.id}/merchant-session`, {
    body: { secret: locked.merchant_session_secret }
  })
  await expectStatus(409, "POST", `/v1/payer/deposit-requests/${id}/merchant-session`, {
    body: { secret: "mss_whatever" }
  })
  await expectStatus(404, "GET", `/v1/payer/deposit-requests/${wellFormed("dr")}`)

  // A request held for a blocked payout address, resumed to another one by a member.
  const blocked = (await createOne()) as { id: string }
  const uuid = (blocked.id as string).slice(3)
  const at = () => new Date().toISOString()
  await apply(blocked.id, {
    type: "payer.wallet_attested",
    at: at(),
    wallet: wallet.address,
    address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
  })
  await apply(blocked.id, {
    type: "deposit.credited",
    at: at(),
    credit_id: `credit-${uuid}`,
    amount_base_units: "3000000",
    from: wallet.address
  })
  await db.query(
    `insert into held_transfers (command_id, deposit_request_id, topic, payload, code, reason, held_at)
     select payload->>'command_id', deposit_request_id, topic, payload, 'payout_address_blocked',
       'blacklisted by the token', now()
     from outbox where deposit_request_id = $1 and topic = 'command.settle'`,
    [uuid]
  )
  await apply(blocked.id, {
    type: "attention.raised",
    at: at(),
    code: "payout_address_blocked",
    message: "USDC's issuer has blacklisted the payout address.",
    resolution: "Resume the request with another enabled payout address of the account (payout_address_id)."
  })
  await expectStatus(401, "POST", `/v1/deposit-requests/${blocked.id}/resume`, {
    token: key,
    body: { payout_address_id: secondPayout.id }
  })
  await expectStatus(200, "POST", `/v1/deposit-requests/${blocked.id}/resume`, {
    token: session,
    body: { payout_address_id: secondPayout.id }
  })
  await expectStatus(409, "POST", `/v1/deposit-requests/${id}/resume`, {
    token: session,
    body: { payout_address_id: secondPayout.id }
  })

  // Attachments: declared, uploaded (straight to the service's upload URL, no API operation), attached.
  const pdf = Buffer.from("%PDF-1.7\n% invoice\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
  const attachment = await expectStatus(201, "POST", "/v1/attachments", {
    token: key,
    body: { file_name: "invoice.pdf", size_bytes: pdf.length }
  })
  await expectStatus(409, "GET", `/v1/attachments/${attachment.id}/download-link`, { token: key })
  const upload = attachment.upload as { url: string; method: string; headers: Record<string, string> }
  const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: pdf })
  expect(put.status).toBe(200)
  await expectStatus(200, "GET", `/v1/attachments/${attachment.id}`, { token: key })
  await expectStatus(200, "GET", "/v1/attachments?limit=5", { token: key })
  await expectStatus(200, "GET", `/v1/attachments/${attachment.id}/download-link`, { token: key })
  await refusedAsDocumented("POST", "/v1/attachments", {
    token: key,
    body: { file_name: "../etc/passwd", size_bytes: 10 }
  })
  await expectStatus(200, "PUT", `/v1/deposit-requests/${id}/attachments`, {
    token: key,
    body: { attachment_ids: [attachment.id] }
  })
  await expectStatus(200, "GET", `/v1/deposit-requests/${id}/attachments`, { token: key })
  const spare = await expectStatus(201, "POST", "/v1/attachments", {
    token: key,
    body: { file_name: "spare.pdf", size_bytes: 10 }
  })
  await expectStatus(204, "DELETE", `/v1/attachments/${spare.id}`, { token: key })

  // Webhooks: an endpoint on the local receiver, its test event delivered, read, redelivered.
  const endpoint = await expectStatus(201, "POST", "/v1/webhooks", {
    token: key,
    body: { url: `https://${WEBHOOK_HOST}:${receiverPort}/hooks` }
  })
  await refusedAsDocumented("POST", "/v1/webhooks", { token: key, body: { url: "http://localhost/hooks" } })
  await expectStatus(200, "GET", "/v1/webhooks?limit=5", { token: key })
  await expectStatus(200, "GET", `/v1/webhooks/${endpoint.id}`, { token: key })
  await expectStatus(404, "GET", `/v1/webhooks/${listener.id}`, { token: key })
  await expectStatus(200, "PATCH", `/v1/webhooks/${endpoint.id}`, {
    token: key,
    body: { enabled_events: ["*"] }
  })
  await refusedAsDocumented("PATCH", `/v1/webhooks/${endpoint.id}`, {
    token: key,
    body: { enabled_events: ["no.such"] }
  })
  const tested = await expectStatus(202, "POST", `/v1/webhooks/${endpoint.id}/test`, { token: key })
  await expectStatus(200, "POST", `/v1/webhooks/${endpoint.id}/rotate-secret`, {
    token: key,
    body: { expires_in_hours: 1 }
  })
  let deliveryId = ""
  await waitFor(async () => {
    const listed = await send("GET", `/v1/webhooks/${endpoint.id}/deliveries`, { token: key })
    deliveryId = (listed.body?.deliveries as Array<{ id: string }> | undefined)?.[0]?.id ?? ""
    return deliveryId !== ""
  })
  await expectStatus(200, "GET", `/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}`, { token: key })
  await expectStatus(404, "GET", `/v1/webhooks/${endpoint.id}/deliveries/${wellFormed("whd")}`, {
    token: key
  })
  await expectStatus(200, "GET", "/v1/events?limit=5", { token: key })
  await expectStatus(200, "GET", `/v1/events/${tested.event_id}`, { token: key })
  await expectStatus(202, "POST", `/v1/events/${tested.event_id}/redeliver`, {
    token: key,
    body: { webhook_id: endpoint.id }
  })
  await expectStatus(204, "POST", `/v1/webhooks/${endpoint.id}/disable`, { token: key })
  await expectStatus(409, "POST", `/v1/webhooks/${endpoint.id}/test`, { token: key })
  await expectStatus(409, "POST", `/v1/webhooks/${endpoint.id}/rotate-secret`, { token: key, body: {} })
  await expectStatus(409, "PATCH", `/v1/webhooks/${endpoint.id}`, {
    token: key,
    body: { enabled_events: ["*"] }
  })

  // The listener: a delivery handed out, answered; reopened, its secret rotated, removed.
  let handed: { event_id: string; attempt: number } | undefined
  await waitFor(async () => {
    const polled = await send("GET", `/v1/webhook-listeners/${listener.id}/deliveries?timeout=1`, {
      token: key
    })
    handed = (polled.body?.deliveries as Array<{ event_id: string; attempt: number }> | undefined)?.[0]
    return handed !== undefined
  })
  await expectStatus(200, "POST", `/v1/webhook-listeners/${listener.id}/answers`, {
    token: key,
    body: { event_id: handed!.event_id, attempt: handed!.attempt, status: 200, error: null, duration_ms: 3 }
  })
  await expectStatus(409, "POST", `/v1/webhook-listeners/${listener.id}/answers`, {
    token: key,
    body: { event_id: wellFormed("evt"), attempt: 1, status: 200, error: null, duration_ms: 3 }
  })
  await expectStatus(200, "POST", `/v1/webhook-listeners/${listener.id}/reopen`, { token: key, body: {} })
  await expectStatus(200, "POST", `/v1/webhook-listeners/${listener.id}/rotate-secret`, { token: key })
  await expectStatus(404, "GET", `/v1/webhook-listeners/${endpoint.id}/deliveries`, { token: key })
  await expectStatus(204, "DELETE", `/v1/webhook-listeners/${listener.id}`, { token: key })

  // Cancels, the key's revocation, the session's end.
  await expectStatus(200, "POST", `/v1/deposit-requests/${id}/cancel`, {
    token: key,
    body: { reason: "Changed." }
  })
  await expectStatus(409, "POST", `/v1/deposit-requests/${blocked.id}/cancel`, { token: key, body: {} })
  await expectStatus(200, "POST", `/v1/payout-addresses/${secondPayout.id}/disable`, { token: key })
  await expectStatus(204, "DELETE", "/v1/account/api-key", { token: session })
  await expectStatus(401, "GET", "/v1/deposit-requests", { token: key })
  await expectStatus(204, "DELETE", "/v1/account/session", { token: session })

  // Generic refusals: no credential on each secured operation; an unknown id on each that answers 404 (with the
  // document's own example body, so only the id is wrong).
  const fresh = await operatorSession()
  const unexpected: Array<string> = []
  for (const op of operations) {
    const path = op.template.replace(/\{(\w+)\}/g, (_, name: string) => wellFormed(prefixOf(op, name)))
    const body = op.method === "GET" || op.method === "DELETE" ? {} : { body: exampleBody(op) ?? {} }
    if (op.secured) {
      const answer = await send(op.method, path, body)
      if (answer.status !== 401) unexpected.push(`${op.key} without a credential: ${answer.status}`)
    }
    if (op.template.includes("{") && "404" in op.responses) {
      const answer = await send(op.method, path, { ...(op.secured ? { token: fresh } : {}), ...body })
      if (answer.status !== 404) unexpected.push(`${op.key} on an unknown id: ${answer.status}`)
    }
  }
  expect(unexpected).toEqual([])
}

/** The prefix of a path id, read from the parameter's pattern. */
const prefixOf = (op: Operation, name: string) => {
  const param = op.parameters.find((p) => p.name === name && p.in === "path")
  const pattern = (param?.schema as Json | undefined)?.pattern
  const prefix = typeof pattern === "string" ? /^\^([a-z]+)_/.exec(pattern)?.[1] : undefined
  if (prefix === undefined) throw new Error(`${op.key}: no id pattern for ${name}`)
  return prefix
}

/** The operation's request body example, from the document. */
const exampleBody = (op: Operation): unknown => {
  const schema = resolveSchema(op.requestBody?.content?.["application/json"]?.schema)
  return (schema?.examples as Array<unknown> | undefined)?.[0]
}

/** A session of the operator CLI's kind (no member) on a new account. */
const operatorSession = async () => (await createMerchant(service.databaseUrl)).sessionToken

const responseViolations = (exchange: Exchange): ReadonlyArray<Violation> =>
  (JSON.parse(exchange.answerHeaders["sl-violations"] ?? "[]") as Array<Violation>).filter(
    (v) => v.location[0] === "response"
  )

describe("Prism over every operation's traffic", () => {
  it("finds no violation on any answer, and every operation of the document answered a success", async () => {
    await traffic()
    const violations = exchanges.flatMap((e) =>
      responseViolations(e).map(
        (v) => `${e.method} ${e.url} ${e.status}: ${v.location.join(".")} ${v.message}`
      )
    )
    expect(violations).toEqual([])
    // A request the service took must be one the document takes too.
    const refusedByDocument = exchanges
      .filter((e) => e.status < 300)
      .flatMap((e) =>
        (JSON.parse(e.answerHeaders["sl-violations"] ?? "[]") as Array<Violation>)
          .filter((v) => v.location[0] === "request")
          .map((v) => `${e.method} ${e.url} ${e.status}: ${v.location.join(".")} ${v.message}`)
      )
    expect(refusedByDocument).toEqual([])
    // And the service's refusals of what the document states are the document's refusals too.
    const unflagged = [...documentedRefusals]
      .filter(
        (e) =>
          !(JSON.parse(e.answerHeaders["sl-violations"] ?? "[]") as Array<Violation>).some(
            (v) => v.location[0] === "request"
          )
      )
      .map((e) => `${e.method} ${e.url} ${e.body ?? ""}`)
    expect(unflagged).toEqual([])
    const succeeded = new Set(exchanges.filter((e) => e.status < 300).map((e) => e.op.key))
    expect(operations.map((op) => op.key).filter((key) => !succeeded.has(key))).toEqual([])
    const statuses = new Map<string, Set<number>>()
    for (const e of exchanges) statuses.set(e.op.key, (statuses.get(e.op.key) ?? new Set()).add(e.status))
    const withError = [...statuses.values()].filter((seen) => [...seen].some((s) => s >= 400)).length
    console.log(
      `${exchanges.length} calls on ${statuses.size} operations (${withError} with an error answer too); ` +
        `statuses: ${[...new Set(exchanges.map((e) => e.status))].sort().join(", ")}`
    )
  }, 240_000)
})

/** The JSON types a schema allows, or undefined when it allows any (or says too little to tell). */
const allowedTypes = (raw: Json | undefined): Set<string> | undefined => {
  const schema = resolveSchema(raw)
  if (schema === undefined) return undefined
  if (typeof schema.type === "string") return new Set([schema.type])
  if (Array.isArray(schema.type)) return new Set(schema.type as Array<string>)
  const values = "const" in schema ? [schema.const] : (schema.enum as Array<unknown> | undefined)
  if (values !== undefined) return new Set(values.map(jsonType))
  const branches = (schema.anyOf ?? schema.oneOf) as Array<Json> | undefined
  if (branches !== undefined) {
    const each = branches.map(allowedTypes)
    return each.some((t) => t === undefined) ? undefined : new Set(each.flatMap((t) => [...t!]))
  }
  if (Array.isArray(schema.allOf)) {
    for (const branch of schema.allOf as Array<Json>) {
      const types = allowedTypes(branch)
      if (types !== undefined) return types
    }
  }
  if ("properties" in schema) return new Set(["object"])
  if ("items" in schema) return new Set(["array"])
  return undefined
}
const jsonType = (value: unknown) =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number"
        ? "number"
        : typeof value
const WRONG: ReadonlyArray<unknown> = ["planted", 12345, true, null, ["planted"], { planted: true }]
/** A value of a type the schema refuses (an integer schema allows numbers' type only for integers). */
const wrongFor = (types: Set<string>) =>
  WRONG.find((value) => {
    const type = jsonType(value)
    return !(types.has(type) || (type === "number" && types.has("integer")))
  })

/** The properties an object schema declares, required ones first. */
const declaredProperties = (raw: Json | undefined): ReadonlyArray<[string, Json]> => {
  const schema = resolveSchema(raw)
  if (schema === undefined) return []
  if (Array.isArray(schema.allOf)) return (schema.allOf as Array<Json>).flatMap(declaredProperties)
  // A union: the properties every branch declares, each allowing what any branch allows.
  const branches = (schema.anyOf ?? schema.oneOf) as Array<Json> | undefined
  if (branches !== undefined) {
    const each = branches.map((branch) => new Map(declaredProperties(branch)))
    return [...(each[0]?.keys() ?? [])]
      .filter((name) => each.every((props) => props.has(name)))
      .map((name) => [name, { anyOf: each.map((props) => props.get(name)!) }])
  }
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Json>)
  const required = new Set((schema.required ?? []) as Array<string>)
  return [...properties.filter(([k]) => required.has(k)), ...properties.filter(([k]) => !required.has(k))]
}

/**
 * The planted answer for one recorded success: one declared property of a JSON body given a value of a type its
 * schema refuses; a text body whose schema has a pattern, a line before it; an empty one (204), the required
 * `X-Request-Id` header left out.
 */
const plant = (exchange: Exchange) => {
  const headers = Object.fromEntries(
    Object.entries(exchange.answerHeaders).filter(
      ([name]) => !["content-length", "content-encoding", "transfer-encoding", "sl-violations"].includes(name)
    )
  )
  const content = exchange.op.responses[String(exchange.status)]?.content ?? {}
  const schema = content["application/json"]?.schema
  // A text answer (the CSV export) whose schema states its form: a line before it breaks the form.
  const text = Object.entries(content).find(([type]) => type !== "application/json")?.[1].schema
  if (schema === undefined && typeof text?.pattern === "string")
    return { headers, body: `planted\r\n${exchange.answer}`, planted: "pattern" }
  if (schema === undefined) {
    const { "x-request-id": _dropped, ...rest } = headers
    return { headers: rest, body: exchange.answer, planted: "X-Request-Id" }
  }
  const planted = plantIn(JSON.parse(exchange.answer), schema)
  if (planted === undefined)
    throw new Error(`${exchange.op.key}: no declared property to plant in ${exchange.answer.slice(0, 200)}`)
  return { headers, body: JSON.stringify(planted.value), planted: planted.name }
}

/** The value with one declared property (of itself, or of an array's first item) of a wrong type. */
const plantIn = (value: unknown, raw: Json): { value: unknown; name: string } | undefined => {
  const schema = resolveSchema(raw)
  if (Array.isArray(value)) {
    const items = schema?.items as Json | undefined
    const first = value.length > 0 && items !== undefined ? plantIn(value[0], items) : undefined
    return first === undefined ? undefined : { value: [first.value, ...value.slice(1)], name: first.name }
  }
  if (value === null || typeof value !== "object") return undefined
  for (const [name, property] of declaredProperties(schema)) {
    const types = allowedTypes(property)
    const wrong = types === undefined ? undefined : wrongFor(types)
    if (name in value && wrong !== undefined) return { value: { ...value, [name]: wrong }, name }
  }
  return undefined
}

// Replays the successes the traffic above recorded: run with it, in this order.
describe("Prism in front of a planting upstream", () => {
  it("flags the planted field (or missing header) on each operation's recorded success", async () => {
    const firsts = new Map<string, Exchange>()
    for (const e of exchanges) if (e.status < 300 && !firsts.has(e.op.key)) firsts.set(e.op.key, e)
    expect(firsts.size).toBe(operations.length)
    const missed: Array<string> = []
    const kinds = new Map<string, number>()
    for (const exchange of firsts.values()) {
      const planting = plant(exchange)
      const kind =
        planting.planted === "X-Request-Id" ? "header" : planting.planted === "pattern" ? "text" : "json"
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
      plantedAnswers.set(`${exchange.method} ${decodeURIComponent(exchange.url)}`, {
        status: exchange.status,
        headers: planting.headers,
        body: planting.body
      })
      const res = await fetch(`${prismOnPlanted}${exchange.url}`, {
        method: exchange.method,
        headers: exchange.headers,
        ...(exchange.body === undefined ? {} : { body: exchange.body })
      })
      await res.text()
      expect([exchange.op.key, res.status]).toEqual([exchange.op.key, exchange.status])
      // A body violation names the property in its location, a header one in its message.
      const flagged = (JSON.parse(res.headers.get("sl-violations") ?? "[]") as Array<Violation>).filter(
        (v) =>
          v.location[0] === "response" &&
          [...v.location, v.message].join(" ").toLowerCase().includes(planting.planted.toLowerCase())
      )
      if (flagged.length === 0)
        missed.push(`${exchange.op.key} (${planting.planted}): ${res.headers.get("sl-violations") ?? "none"}`)
    }
    expect(missed).toEqual([])
    console.log(`planted: ${firsts.size} operations; ${JSON.stringify(Object.fromEntries(kinds))}`)
  }, 120_000)
})
