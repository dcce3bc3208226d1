import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { getAddress } from "viem"
import { WebhookTrust } from "../../../services/webhooks/HttpsWebhookSender"
import { WebhookResolver } from "../../../services/webhooks/WebhookUrlRules"
import { errorTable } from "../../../src/http/Errors"
import { bodyLimitFor } from "../../../src/http/middleware/BodyLimit"
import { merchantClient } from "../../support/Api"
import { createMerchant, type Merchant } from "../../support/Merchant"
import {
  applyMutation,
  arbitraryOf,
  boundedFilter,
  type JsonSchema,
  type Mutation,
  mutationsOf,
  type SchemaContext
} from "../../support/SchemaArbitrary"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 51, decision 0095: the served document and the service refuse the same requests. Per operation with
 * inputs, requests are drawn from the document's own schemas (test/support/SchemaArbitrary.ts) and judged by Ajv
 * 2020 with those schemas, then sent:
 *  - the document accepts ⇒ the service does not answer 400 (anything else is about state, not shape: 404 an id
 *    this account does not have, 409 a status or an idempotency key, 422 a rule of the resource, 429 a sign-in
 *    limit, 401/403 a credential the route does not take); a long poll still held is accepted;
 *  - the document refuses (one mutation that Ajv refuses) ⇒ the service answers 400 `invalid_request` with the
 *    envelope, or, for a malformed id in the path, 404 `<resource>_not_found` as the error table says.
 * The few rules JSON Schema cannot hold are named in `BEYOND_SCHEMA`, each with the check that recognises them.
 */

type Json = Record<string, unknown>
interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required?: boolean
  readonly schema: JsonSchema
}
interface Operation {
  readonly method: string
  readonly path: string
  readonly operationId: string
  readonly security: ReadonlyArray<Record<string, unknown>>
  readonly parameters: ReadonlyArray<Parameter>
  readonly body?: { readonly schema: JsonSchema; readonly required: boolean }
}
interface Request {
  readonly path: Record<string, string>
  readonly query: Record<string, string>
  readonly header: Record<string, string>
  readonly body?: unknown
}
interface Answer {
  readonly status: number | "held"
  readonly body: Json | null
}

const NUM_RUNS = 40
/** A time budget per operation and direction; fewer than `MIN_RUNS` inside it fails the test. */
const BUDGET_MS = 3_000
const MIN_RUNS = 8
/** A long poll the service still holds after this long has passed validation (a 400 answers in milliseconds). */
const HELD_MS = 400
const FETCH_TIMEOUT_MS = 10_000

let service: RunningService
let merchant: Merchant
/** Accounts of their own, one per direction, for the operations that change the caller's own credentials. */
const throwaway: Record<"accept" | "refuse", Merchant | undefined> = { accept: undefined, refuse: undefined }
let operations: Array<Operation>
let ctx: SchemaContext
let ajv: Ajv2020
/** Ids this account really has, by prefix, so requests also reach what lies behind a lookup. */
const realIds: Record<string, Array<string>> = {}
const documented = new Set(errorTable.map((e) => `${e.status} ${e.code}`))

/** Every name resolves to a public stand-in, so webhook URLs meet the URL rules, not this machine's lack of DNS. */
const anyHostNetwork = Layer.mergeAll(
  Layer.succeed(WebhookResolver, {
    resolve: () => Effect.succeed([{ address: "93.184.216.34", family: 4 as const }])
  }),
  Layer.succeed(WebhookTrust, { route: () => ({ address: "127.0.0.1", family: 4 as const }) })
)

const CREDENTIAL_CHANGES = new Set(["account.issueApiKey", "account.refreshSession"])

const readOperations = (doc: Json): Array<Operation> => {
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const requestBody = op.requestBody as
        | { required?: boolean; content: Record<string, { schema: JsonSchema }> }
        | undefined
      const json = requestBody?.content["application/json"]
      const parameters = (op.parameters ?? []) as Array<Parameter>
      if (parameters.length === 0 && json === undefined) continue
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        security: (op.security ?? []) as Array<Record<string, unknown>>,
        parameters,
        ...(json === undefined
          ? {}
          : { body: { schema: json.schema, required: requestBody?.required === true } })
      })
    }
  }
  // What removes or ends a resource runs last, so the ids it takes stay usable for every other operation.
  const destructive = (op: Operation) =>
    op.method === "DELETE" || /\/(disable|cancel)$/.test(op.path) ? 1 : 0
  return out.sort((a, b) => destructive(a) - destructive(b))
}

// ---- Ajv: the document's verdict --------------------------------------------------------------------------

const validators = new Map<JsonSchema, ValidateFunction>()
const validatorOf = (schema: JsonSchema): ValidateFunction => {
  let validate = validators.get(schema)
  if (validate === undefined) {
    validate = ajv.compile(
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/')) as Json
    )
    validators.set(schema, validate)
  }
  return validate
}

/** What the document says is wrong with a request, by place; empty when it accepts it. */
const refusals = (op: Operation, req: Request): Array<string> => {
  const out: Array<string> = []
  for (const p of op.parameters) {
    const value = req[p.in][p.name]
    if (value === undefined) {
      if (p.required === true) out.push(`${p.in} ${p.name}: missing`)
      continue
    }
    const validate = validatorOf(p.schema)
    if (!validate(value)) out.push(`${p.in} ${p.name}: ${ajv.errorsText(validate.errors)}`)
  }
  if (op.body !== undefined) {
    if (req.body === undefined) {
      if (op.body.required) out.push("body: missing")
    } else {
      const validate = validatorOf(op.body.schema)
      if (!validate(req.body)) out.push(`body: ${ajv.errorsText(validate.errors)}`)
    }
  }
  return out
}

// ---- Generation --------------------------------------------------------------------------------------------

/** HTTP carries header values as visible ASCII here (fetch refuses controls and trims spaces). */
const headerValue = (schema: JsonSchema) => {
  const max = typeof schema === "object" && typeof schema.maxLength === "number" ? schema.maxLength : 64
  return fc.oneof(
    { weight: 5, arbitrary: fc.stringMatching(/^[!-~]([ -~]{0,40}[!-~])?$/) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: fc.constantFrom(..."abcXYZ019-_"), minLength: max, maxLength: max })
    }
  )
}

/** Parameters whose every accepted value the document cannot list: some real ones beside the drawn. */
const KNOWN_VALUES: Record<string, fc.Arbitrary<string>> = {
  time_zone: fc.constantFrom("UTC", "America/Los_Angeles", "Europe/Paris", "Asia/Kolkata", "Etc/GMT+5")
}

const requestArbitrary = (op: Operation): fc.Arbitrary<Request> => {
  const place = (where: Parameter["in"]) => {
    const params = op.parameters.filter((p) => p.in === where)
    const model = Object.fromEntries(
      params.map((p) => {
        const drawn = (
          where === "header" ? headerValue(p.schema) : arbitraryOf(p.schema, ctx)
        ) as fc.Arbitrary<string>
        const known = KNOWN_VALUES[p.name]
        return [p.name, known === undefined ? drawn : fc.oneof({ weight: 2, arbitrary: known }, drawn)]
      })
    )
    return fc.record(model, { requiredKeys: params.filter((p) => p.required === true).map((p) => p.name) })
  }
  const body =
    op.body === undefined
      ? fc.constant(undefined)
      : op.body.required
        ? arbitraryOf(op.body.schema, ctx)
        : fc.option(arbitraryOf(op.body.schema, ctx), { nil: undefined })
  return fc
    .record({ path: place("path"), query: place("query"), header: place("header"), body })
    .map(({ body: b, ...rest }) => (b === undefined ? rest : { ...rest, body: b }) as Request)
}

const validRequests = (op: Operation) =>
  boundedFilter(requestArbitrary(op), (req) => refusals(op, req).length === 0, `${op.method} ${op.path}`)

interface Mutated {
  readonly request: Request
  readonly where: string
  readonly kind: string
}

/** One input of a valid request changed so that the document refuses it. */
const mutatedRequests = (op: Operation): fc.Arbitrary<Mutated> =>
  validRequests(op)
    .chain((req) => {
      const candidates: Array<fc.Arbitrary<Mutated>> = []
      for (const p of op.parameters) {
        const current = req[p.in][p.name]
        const strings = [
          "",
          "0",
          "-1",
          "101",
          "31",
          "1.5",
          "1e1",
          " 1",
          "abc",
          "yesterday",
          "x".repeat(300),
          ...(current === undefined
            ? []
            : [`${current}x`, `x${current}`, current.slice(1), current.toUpperCase()])
        ]
        // fetch cannot send control characters or non-ASCII in a header: those mutations are for query and path.
        if (p.in !== "header") strings.push(`${current ?? "a"}\u0001`, "\u001f")
        // An empty path segment names another route (the list, or none): routing, not this operation's inputs.
        if (p.in === "path") strings.splice(strings.indexOf(""), 1)
        candidates.push(
          fc.constantFrom(...strings).map((value) => ({
            request: { ...req, [p.in]: { ...req[p.in], [p.name]: value } },
            where: `${p.in} ${p.name}`,
            kind: "value"
          }))
        )
        // A path without its id is another route (or none): that is about routing, not this operation's inputs.
        if (p.required === true && p.in !== "path") {
          const { [p.name]: _, ...rest } = req[p.in]
          candidates.push(
            fc.constant({ request: { ...req, [p.in]: rest }, where: `${p.in} ${p.name}`, kind: "missing" })
          )
        }
      }
      if (op.body !== undefined && req.body !== undefined) {
        const mutations: Array<Mutation> = mutationsOf(req.body, op.body.schema, ctx)
        if (mutations.length > 0)
          candidates.push(
            fc.constantFrom(...mutations).map((m) => ({
              request: { ...req, body: applyMutation(req.body, m) },
              where: `body /${m.path.join("/")}`,
              kind: m.kind
            }))
          )
      }
      return fc.oneof(...candidates)
    })
    .filter((m) => refusals(op, m.request).length > 0)

// ---- Sending -----------------------------------------------------------------------------------------------

let clients = 0
const authOf = (op: Operation, direction: Direction): Record<string, string> => {
  // Public routes limit attempts per client: each request comes from a client of its own (the last
  // X-Forwarded-For hop counts behind a loopback peer), so answers show what the service thinks of the input.
  if (op.security.length === 0)
    return { "x-forwarded-for": `10.51.${(++clients >> 8) & 255}.${clients & 255}` }
  const sessionOnly = op.security.every((s) => "session" in s)
  const who = (CREDENTIAL_CHANGES.has(op.operationId) ? throwaway[direction] : merchant) as Merchant
  return who.headers(sessionOnly ? "session" : "api_key")
}

const isLongPoll = (req: Request) => req.query.wait_for !== undefined

type Direction = "accept" | "refuse"

const send = async (op: Operation, req: Request, direction: Direction): Promise<Answer> => {
  const holdMs = direction === "accept" ? HELD_MS : 5_000
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(req.path[name] ?? ""))
  const query = new URLSearchParams(req.query).toString()
  const headers: Record<string, string> = { ...authOf(op, direction), ...req.header }
  if (req.body !== undefined) headers["content-type"] = "application/json"
  const longPoll = isLongPoll(req)
  try {
    const res = await fetch(`${service.baseUrl}${path}${query === "" ? "" : `?${query}`}`, {
      method: op.method,
      headers,
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
      signal: AbortSignal.timeout(longPoll ? holdMs : FETCH_TIMEOUT_MS)
    })
    const text = await res.text()
    const json =
      res.headers.get("content-type")?.includes("json") === true && text !== "" ? JSON.parse(text) : null
    return { status: res.status, body: json as Json | null }
  } catch (error) {
    if (longPoll && (error as Error).name === "TimeoutError") return { status: "held", body: null }
    throw error
  }
}

const describeRequest = (req: Request) => JSON.stringify(req).slice(0, 2000)

// ---- Rules JSON Schema cannot hold (decision 0095) ---------------------------------------------------------

interface BeyondSchema {
  readonly why: string
  /** The `param` the service names when it refuses under this rule. */
  readonly param: string
  /** Whether this request falls under the rule, judged independently of the service's answer. */
  readonly applies: (op: Operation, req: Request) => boolean
}
const bodyField = (req: Request, name: string): unknown =>
  req.body !== null && typeof req.body === "object" ? (req.body as Json)[name] : undefined
const badChecksum = (value: unknown) =>
  typeof value === "string" &&
  /[a-f]/.test(value.slice(2)) &&
  /[A-F]/.test(value.slice(2)) &&
  getAddress(value.toLowerCase() as `0x${string}`) !== value
const isTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone })
    return true
  } catch {
    return false
  }
}
const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

/** Decision 0095's rules a JSON Schema cannot hold, each recognised without asking the service. */
const BEYOND_SCHEMA: ReadonlyArray<BeyondSchema> = [
  ...["address", "wallet", "deposit_address", "payer_wallet"].map((param) => ({
    why: "a mixed-case address carries an EIP-55 checksum, which a pattern cannot compute",
    param,
    applies: (_: Operation, req: Request) =>
      badChecksum(bodyField(req, param)) || badChecksum(req.query[param])
  })),
  {
    why: "time zones are the IANA database's names, a list no pattern keeps up with",
    param: "time_zone",
    applies: (_, req) => req.query.time_zone !== undefined && !isTimeZone(req.query.time_zone)
  },
  {
    why: "a deadline is measured from now: 5 minutes to 30 days ahead",
    param: "expires_at",
    applies: (_, req) => {
      const at = bodyField(req, "expires_at")
      if (typeof at !== "string") return false
      const ahead = Date.parse(at) - Date.now()
      // A minute's margin either side: the request takes time to arrive, and the bounds are the service's clock.
      return !(ahead > 5 * MINUTE + MINUTE && ahead < 30 * DAY - MINUTE)
    }
  },
  ...["return_url", "url"].map((param) => ({
    why: "the WHATWG URL parser decides what an absolute URL is (ports up to 65535, the characters of a host)",
    param,
    applies: (_: Operation, req: Request) => {
      const url = bodyField(req, param)
      return typeof url === "string" && !URL.canParse(url)
    }
  })),
  ...(
    [
      ["code", "signIn.verifyEmail"],
      ["token", "signIn.linkPreview"],
      ["token", "signIn.link"],
      ["token", "signIn.invitePreview"],
      ["token", "signIn.acceptInvite"],
      ["response", "passkeySignIn.signIn"]
    ] as const
  ).map(([param, operationId]) => ({
    why: "a mailed code or token is compared with the one sent, a passkey's answer verified against a fresh challenge: drawn ones never match, so these operations are checked on their shape only",
    param,
    applies: (op: Operation) => op.operationId === operationId
  })),
  ...["chain_id", "expires_at", "signature"].map((param) => ({
    why: "a payer's wallet statement names this deployment's chain, expires within 24 hours of now and is signed by the wallet (EIP-712); drawn statements are never signed, so this operation is checked on its shape only",
    param,
    applies: (op: Operation) => op.operationId === "payer.wallet"
  })),
  {
    why: "wait_for=change is asked with the version the caller has: a rule between two parameters",
    param: "version",
    applies: (op, req) =>
      op.parameters.some((p) => p.name === "version") &&
      req.query.wait_for !== undefined &&
      req.query.version === undefined
  }
]

/** A body over its route's byte limit is refused with 413 before it is read: a size no schema states. */
const overLimit = (op: Operation, req: Request) =>
  req.body !== undefined && Buffer.byteLength(JSON.stringify(req.body)) > bodyLimitFor(op.path)

// ---- Bookkeeping -------------------------------------------------------------------------------------------

const tally = new Map<string, Record<string, number>>()
const count = (label: string, key: string) => {
  const row = tally.get(label) ?? {}
  row[key] = (row[key] ?? 0) + 1
  tally.set(label, row)
}

beforeAll(async () => {
  service = await startService({ config: { rateLimitCapacity: 1_000_000 }, webhookNetwork: anyHostNetwork })
  merchant = await createMerchant(service.databaseUrl)
  throwaway.accept = await createMerchant(service.databaseUrl)
  throwaway.refuse = await createMerchant(service.databaseUrl)
  const res = await fetch(`${service.baseUrl}/openapi.json`, {
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)
  })
  const doc = (await res.json()) as Json & { components: { schemas: Record<string, JsonSchema> } }
  operations = readOperations(doc)
  ajv = new Ajv2020({ strict: true, allErrors: false })
  addFormats(ajv)
  ajv.addKeyword({ keyword: "components" })
  ajv.addSchema({ $id: "openapi.json", components: doc.components })

  const client = merchantClient(service, merchant)
  const { issuerId, payoutAddressId } = await client.setup()
  const created = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const answer = await client.call<{ id: string }>("POST", path, body, headers)
    if (answer.status >= 300) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
    return answer.body.id
  }
  const customerId = await created("/v1/customers", { name: "Contract customer" })
  const depositRequestId = await created(
    "/v1/deposit-requests",
    { amount: "25.000000", issuer_id: issuerId, payout_address_id: payoutAddressId },
    { "idempotency-key": "contract-agreement-setup" }
  )
  const webhookId = await created("/v1/webhooks", { url: "https://hooks.example.com/in" })
  const attachmentId = await created("/v1/attachments", { file_name: "invoice.pdf", size_bytes: 1234 })
  for (const id of [issuerId, payoutAddressId, customerId, depositRequestId, webhookId, attachmentId]) {
    const prefix = id.slice(0, id.indexOf("_"))
    realIds[prefix] = [...(realIds[prefix] ?? []), id]
  }
  const prefixed = /^\^([a-z]+)_\[0-9a-f\]\{8\}/
  ctx = {
    schemas: doc.components.schemas,
    maxDepth: 3,
    // Values the schema allows that also pass what it cannot say, mixed with plain draws: real ids of this
    // account (so requests reach what lies behind a lookup), addresses with a right checksum, deadlines ahead.
    override: (schema: JsonSchema) => {
      const ref = typeof schema === "object" && typeof schema.$ref === "string" ? schema.$ref : undefined
      const resolved =
        ref === undefined ? schema : doc.components.schemas[ref.slice("#/components/schemas/".length)]
      if (typeof resolved !== "object" || typeof resolved.pattern !== "string") return undefined
      const drawn = fc.stringMatching(new RegExp(resolved.pattern, "u"), { size: "small" })
      const mixed = (chosen: fc.Arbitrary<unknown>) =>
        fc.oneof({ weight: 3, arbitrary: chosen }, { weight: 1, arbitrary: drawn })
      if (resolved.pattern === "^0x[0-9a-fA-F]{40}$") {
        const lower = fc.stringMatching(/^0x[0-9a-f]{40}$/)
        return mixed(
          fc.oneof(
            lower,
            lower.map((a) => `0x${a.slice(2).toUpperCase()}`),
            lower.map((a) => getAddress(a))
          )
        )
      }
      if (ref === "#/components/schemas/Timestamp")
        return mixed(
          fc
            .integer({ min: 10 * MINUTE, max: 29 * DAY })
            .map((ahead) => new Date(Date.now() + ahead).toISOString())
        )
      const prefix = prefixed.exec(resolved.pattern)?.[1]
      const ids = prefix === undefined ? undefined : realIds[prefix]
      return ids === undefined ? undefined : mixed(fc.constantFrom(...ids))
    }
  }
}, 120_000)

afterAll(async () => {
  const lines = [...tally.entries()].map(([label, row]) => `${label} ${JSON.stringify(row)}`)
  console.log(`contract agreement, answers by operation:\n${lines.join("\n")}`)
  await service?.stop()
})

const runs = async (label: string, property: fc.IAsyncPropertyWithHooks<[unknown]>) => {
  const started = performance.now()
  const details = await fc.check(property, {
    numRuns: NUM_RUNS,
    // A failure names its seed; CONTRACT_SEED=<seed> draws the same requests again.
    ...(process.env.CONTRACT_SEED === undefined ? {} : { seed: Number(process.env.CONTRACT_SEED) }),
    endOnFailure: false,
    plugins: [fc.interruptAfterTimeLimit(BUDGET_MS)]
  })
  console.log(`${label}: ${details.numRuns} runs in ${(performance.now() - started).toFixed(0)} ms`)
  if (details.failed)
    throw new Error(
      `seed ${details.seed}, path ${details.counterexamplePath}: ${String((details.errorInstance as Error | undefined)?.message ?? details.errorInstance)}`
    )
  expect(details.numRuns).toBeGreaterThanOrEqual(MIN_RUNS)
}

describe("the document accepts ⇒ the service accepts", () => {
  it("holds for every operation with inputs", async () => {
    expect(operations.length).toBeGreaterThan(60)
    const disagreements: Array<string> = []
    for (const op of operations) {
      const label = `accept ${op.method} ${op.path}`
      await runs(
        label,
        fc.asyncProperty(validRequests(op) as fc.Arbitrary<unknown>, async (value) => {
          const req = value as Request
          const answer = await send(op, req, "accept")
          count(label, String(answer.status))
          if (typeof answer.status === "number" && answer.status >= 500)
            throw new Error(`${answer.status} for ${describeRequest(req)}: ${JSON.stringify(answer.body)}`)
          if (answer.status === 413 && !overLimit(op, req))
            throw new Error(`413 for a body within the route's limit: ${describeRequest(req)}`)
          if (answer.status !== 400) return
          const param = (answer.body?.error as { param?: string } | undefined)?.param
          const beyond = BEYOND_SCHEMA.find((rule) => rule.param === param && rule.applies(op, req))
          if (beyond !== undefined) {
            count(label, `400 ${param} (beyond the schema)`)
            return
          }
          throw new Error(
            `400 for a request the document accepts: ${describeRequest(req)}: ${JSON.stringify(answer.body)}`
          )
        })
      ).catch((error: Error) => disagreements.push(`${label}: ${error.message.slice(0, 1500)}`))
    }
    expect(disagreements).toEqual([])
  }, 170_000)
})

describe("the document refuses ⇒ the service refuses", () => {
  it("holds for every operation with inputs", async () => {
    const disagreements: Array<string> = []
    for (const op of operations) {
      const label = `refuse ${op.method} ${op.path}`
      await runs(
        label,
        fc.asyncProperty(mutatedRequests(op) as fc.Arbitrary<unknown>, async (value) => {
          const m = value as Mutated
          const why = refusals(op, m.request)
          expect(why.length).toBeGreaterThan(0)
          const answer = await send(op, m.request, "refuse")
          count(label, `${answer.status} ${m.where.split(" ")[0]}`)
          const code = (answer.body?.error as { code?: string } | undefined)?.code
          const pathId = m.where.startsWith("path ")
          const refused =
            (answer.status === 400 && code === "invalid_request") ||
            (answer.status === 413 && code === "payload_too_large" && overLimit(op, m.request)) ||
            (pathId && answer.status === 404 && code?.endsWith("_not_found") === true)
          if (!refused)
            throw new Error(
              `${answer.status} ${code ?? ""} for ${m.where} (${m.kind}; the document says ${why.join("; ")}): ${describeRequest(m.request)}`
            )
          expect(documented.has(`${answer.status} ${code}`) || code?.endsWith("_not_found")).toBe(true)
          expect(typeof answer.body?.request_id).toBe("string")
        })
      ).catch((error: Error) => disagreements.push(`${label}: ${error.message.slice(0, 1500)}`))
    }
    expect(disagreements).toEqual([])
  }, 170_000)
})
