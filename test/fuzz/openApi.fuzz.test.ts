import { randomUUID } from "node:crypto"
import fc from "fast-check"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { errorTable } from "../../src/http/Errors"
import { merchantClient } from "../support/Api"
import { createMerchant, type Merchant } from "../support/Merchant"
import { type RawAnswer, rawRequest } from "../support/RawHttp"
import { type RunningService, startService } from "../support/Service"

/**
 * Hostile requests on every operation of the served OpenAPI document: a route added to the API is fuzzed without new
 * test code. Bodies are built from each operation's request schema and then broken (unknown fields, wrong types,
 * lone surrogates, control characters, deep nesting, odd amounts), queries and path ids likewise, with odd content
 * types and credentials. Every answer must hold the invariants below. `FUZZ_RUNS` (default 2,000) and `FUZZ_SEED`
 * set the run; a failure prints the seed and the shrunk request.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000)
const SEED = Number(process.env.FUZZ_SEED ?? 20261124)
const ANSWER_WITHIN_MS = 5_000

type JsonSchema = {
  $ref?: string
  type?: string | Array<string>
  properties?: Record<string, JsonSchema>
  required?: Array<string>
  items?: JsonSchema
  enum?: Array<unknown>
  anyOf?: Array<JsonSchema>
  oneOf?: Array<JsonSchema>
  allOf?: Array<JsonSchema>
  const?: unknown
  pattern?: string
}
interface Operation {
  readonly method: string
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly headerParams: ReadonlyArray<string>
  readonly body: JsonSchema | undefined
  readonly statuses: ReadonlySet<number>
  readonly merchant: boolean
}

let service: RunningService
let alice: Merchant
let bob: Merchant
let db: pg.Client
let operations: ReadonlyArray<Operation>
let components: Record<string, JsonSchema>
/** Real ids by prefix: Alice's own (valid references) and Bob's (another account's, to be refused as unknown). */
const own = new Map<string, string>()
const others = new Map<string, string>()

beforeAll(async () => {
  // Every fuzz request comes from loopback: the sign-in limit per client would otherwise answer 429 to them all.
  service = await startService({
    config: { rateLimitCapacity: 1_000_000, signInAttemptsPerClient: 1_000_000 }
  })
  alice = await createMerchant(service.databaseUrl)
  bob = await createMerchant(service.databaseUrl)
  for (const [merchant, ids] of [
    [alice, own],
    [bob, others]
  ] as const) {
    const api = merchantClient(service, merchant)
    const refs = await api.setup()
    ids.set("iss", refs.issuerId)
    ids.set("pa", refs.payoutAddressId)
    ids.set("cus", (await api.call<{ id: string }>("POST", "/v1/customers", { name: "Fuzz" })).body.id)
    const made = await api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    ids.set("dr", made.body.id)
  }
  const spec = (await (await service.request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, Record<string, unknown>>>
    components: { schemas: Record<string, JsonSchema> }
  }
  components = spec.components.schemas
  operations = Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => {
      const parameters = (op.parameters ?? []) as Array<{ in: string; name: string }>
      const body = (op.requestBody as { content?: Record<string, { schema: JsonSchema }> } | undefined)
        ?.content?.["application/json"]?.schema
      const statuses = new Set(Object.keys(op.responses as object).map(Number))
      return {
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === "query").map((p) => p.name),
        headerParams: parameters.filter((p) => p.in === "header").map((p) => p.name),
        body,
        statuses,
        merchant: statuses.has(401)
      }
    })
  )
  db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await service?.stop()
})

// ---------------------------------------------------------------------------------------------------------------
// Values

const hostileStrings = [
  "\ud800",
  "a\udfffb",
  "\u0000",
  "x\u0007y",
  "\u001b[31m",
  "\ud83d\ude00",
  "",
  " ",
  "a".repeat(5_000),
  "null",
  "__proto__",
  "constructor",
  "%00",
  "'; drop table accounts; --",
  "<script>alert(1)</script>",
  "12.5",
  "1e1",
  "-1.000000",
  "0x10",
  "+12.500000",
  " 12.500000",
  "12.5000000",
  randomUUID(),
  "dr_not-a-uuid"
]
const hostileValues: ReadonlyArray<unknown> = [
  ...hostileStrings,
  null,
  true,
  0,
  -1,
  1e308,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  [],
  {},
  [[[[[]]]]],
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__":{"polluted":true}}')
]
const prefixes = ["dr", "cus", "iss", "pa", "att", "wh", "whd", "evt", "va", "rec", "acct"]

const idFor = (prefix: string) =>
  fc.oneof(
    fc.constant(own.get(prefix) ?? `${prefix}_${randomUUID()}`),
    fc.constant(others.get(prefix) ?? `${prefix}_${randomUUID()}`),
    fc.constant(`${prefix}_${randomUUID()}`),
    fc.constant(randomUUID()),
    fc.constantFrom(...prefixes).map((p) => `${p}_${randomUUID()}`)
  )

/** A plausible value for a field, from its name (ids of the right prefix, amounts, addresses, URLs). */
const plausible = (name: string, schema: JsonSchema): fc.Arbitrary<unknown> => {
  const id = name.match(/^(\w+?)_id$|^starting_after$/)
  if (name.endsWith("_id")) {
    const prefix =
      { issuer: "iss", payout_address: "pa", customer: "cus", webhook: "wh", deposit_request: "dr" }[
        id?.[1] ?? ""
      ] ?? "dr"
    return idFor(prefix)
  }
  if (name === "amount") return fc.constantFrom("1.000000", "25.5", "0.000001", "0", "1")
  if (name.includes("address") || name === "wallet")
    return fc.constantFrom(
      "0x52908400098527886e0f7030069857d2e4169ee7",
      "0x0000000000000000000000000000000000000000"
    )
  if (name.includes("url")) return fc.constantFrom("https://hooks.example.com/x", "http://127.0.0.1/x")
  if (name.includes("email")) return fc.constantFrom("payer@example.com", "not-an-email")
  if (name === "expires_at")
    return fc.constantFrom(
      new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, "Z"),
      "2020-01-01T00:00:00Z"
    )
  if (name === "metadata")
    return fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 })
  return fromSchema(schema, 2)
}

const resolve = (schema: JsonSchema): JsonSchema => {
  let current = schema
  for (let i = 0; i < 10 && current.$ref !== undefined; i++) {
    current = components[current.$ref.replace("#/components/schemas/", "")] ?? {}
  }
  return current
}

/** A value the schema describes, roughly (patterns and bounds are left to the mutations to break). */
const fromSchema = (raw: JsonSchema, depth: number): fc.Arbitrary<unknown> => {
  const schema = resolve(raw)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum)
  const choices = schema.anyOf ?? schema.oneOf
  if (choices !== undefined && choices.length > 0)
    return fc.oneof(...choices.map((c) => fromSchema(c, depth)))
  if (schema.allOf !== undefined && schema.allOf.length > 0) return fromSchema(schema.allOf[0]!, depth)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case "object": {
      if (depth <= 0) return fc.constant({})
      const entries = Object.entries(schema.properties ?? {})
      const required = new Set(schema.required ?? [])
      return fc.record(Object.fromEntries(entries.map(([name, prop]) => [name, plausible(name, prop)])), {
        requiredKeys: entries.map(([name]) => name).filter((name) => required.has(name))
      })
    }
    case "array":
      return fc.array(schema.items ? fromSchema(schema.items, depth - 1) : fc.anything(), { maxLength: 3 })
    case "integer":
      return fc.integer({ min: -5, max: 2_000_000_000 })
    case "number":
      return fc.double({ noNaN: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    default:
      return fc.string({ maxLength: 20 })
  }
}

/** The body as sent: the schema's value, often broken one way or another, or no JSON object at all. */
const bodyFor = (op: Operation): fc.Arbitrary<string | undefined> => {
  const base = op.body === undefined ? fc.constant<unknown>({}) : fromSchema(op.body, 3)
  const broken = base.chain((value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return fc.constant(value)
    const keys = Object.keys(value)
    return fc.oneof(
      fc.constant(value),
      fc.constantFrom(...hostileValues).map((v) => ({ ...value, [`unknown_${keys.length}`]: v })),
      keys.length === 0
        ? fc.constant(value)
        : fc
            .tuple(fc.constantFrom(...keys), fc.constantFrom(...hostileValues))
            .map(([key, v]) => ({ ...value, [key]: v })),
      keys.length === 0
        ? fc.constant(value)
        : fc.constantFrom(...keys).map((key) => {
            const { [key]: _dropped, ...rest } = value as Record<string, unknown>
            return rest
          })
    )
  })
  return fc.oneof(
    { weight: 6, arbitrary: broken.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "{",
        "null",
        "[]",
        '"text"',
        "42",
        `${"[".repeat(3_000)}${"]".repeat(3_000)}`,
        `{"a":${"{".repeat(2_000).replaceAll("{", '{"a":')}1${"}".repeat(2_001)}`,
        '{"a":1,"a":2}',
        "\ufeff{}"
      )
    }
  )
}

const queryFor = (op: Operation): fc.Arbitrary<string> => {
  const value = (name: string) =>
    fc.oneof(
      name === "limit" || name === "timeout"
        ? fc.constantFrom("1", "20", "100", "0", "101", "1e2", "+5", "0x10", "5.0", " 5", "-1", "")
        : name === "version"
          ? fc.constantFrom("0", "1", "99999999999999999999999", "abc")
          : name === "wait_for"
            ? fc.constantFrom("change", "other")
            : plausible(name, {}).map(String),
      fc.constantFrom(...hostileStrings)
    )
  const params = [...op.queryParams, "unknown_param"]
  return fc
    .subarray(params)
    .chain((names) => fc.tuple(...names.map((name) => value(name).map((v) => [name, v] as const))))
    .map((pairs) => {
      const query = new URLSearchParams(pairs as Array<[string, string]>)
      // A held long poll answers at its timeout: keep it short (a bad timeout value stays bad and answers at once).
      const timeout = query.get("timeout")
      if (query.get("wait_for") === "change" && (timeout === null || /^\d+$/.test(timeout)))
        query.set("timeout", "1")
      return query.toString()
    })
}

const pathFor = (op: Operation): fc.Arbitrary<string> =>
  fc
    .tuple(
      ...op.pathParams.map(() => {
        const prefix = op.path.includes("/events/")
          ? "evt"
          : op.path.includes("/webhooks/")
            ? "wh"
            : op.path.includes("/customers/")
              ? "cus"
              : op.path.includes("/issuers/")
                ? "iss"
                : op.path.includes("/payout-addresses/")
                  ? "pa"
                  : op.path.includes("/members/")
                    ? "mem"
                    : op.path.includes("/invites/")
                      ? "inv"
                      : op.path.includes("/sessions/")
                        ? "ses"
                        : "dr"
        return fc.oneof(
          { weight: 4, arbitrary: idFor(prefix).map(encodeURIComponent) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              "%FF%FE",
              "%E0%A4%A",
              `${prefix}_${"a".repeat(4_000)}`,
              "%00",
              "..",
              "%2e%2e",
              "%ED%A0%80",
              `${prefix}_${randomUUID()};x=1`,
              ";"
            )
          }
        )
      })
    )
    .map((values) => {
      let path = op.path
      for (const [i, name] of op.pathParams.entries()) path = path.replace(`{${name}}`, values[i]!)
      return path
    })

const contentTypes = [
  "application/json",
  "application/json; charset=utf-8",
  "application/merge-patch+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  undefined
]

interface FuzzRequest {
  readonly op: Operation
  readonly path: string
  readonly query: string
  readonly body: string | undefined
  readonly contentType: string | undefined
  readonly credential: "alice" | "bob" | "none" | "garbage"
  readonly idempotencyKey: string | undefined
}

const requestFor = (op: Operation): fc.Arbitrary<FuzzRequest> =>
  fc.record({
    op: fc.constant(op),
    path: pathFor(op),
    query: queryFor(op),
    body: ["POST", "PATCH", "PUT", "DELETE"].includes(op.method) ? bodyFor(op) : fc.constant(undefined),
    contentType: fc.oneof(
      { weight: 5, arbitrary: fc.constant("application/json") },
      { weight: 2, arbitrary: fc.constantFrom(...contentTypes) }
    ),
    credential: fc.oneof(
      { weight: 6, arbitrary: fc.constant("alice" as const) },
      { weight: 1, arbitrary: fc.constantFrom("bob" as const, "none" as const, "garbage" as const) }
    ),
    idempotencyKey: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined).map(() => randomUUID()) },
      { weight: 1, arbitrary: fc.constantFrom(undefined, "k".repeat(256), " ", "same-key") }
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Invariants

/** Tables written by infrastructure whatever the request (buckets, leases), or by design on a refusal. */
const mutableByDesign = new Set(["rate_limit_buckets", "leases", "chain_cursors", "effect_sql_migrations"])
/** Refused proofs and sign-in attempts are recorded: that is the lockout's count, not a leak. */
const refusalRecords = (op: Operation) =>
  op.path.startsWith("/v1/payer/")
    ? new Set(["verification_attempts"])
    : op.path.startsWith("/v1/sign-in/")
      ? new Set(["sign_in_attempts"])
      : new Set<string>()

/**
 * The account's people take dashboard sessions only (an API key is 401 there), so they are fuzzed with the
 * merchant's session; the key and session routes keep the key, lest a fuzzed log-out end the session for the rest.
 */
const bySession = (op: Operation) => /^\/v1\/account\/(member|members|invites|sessions)(\/|$)/.test(op.path)

const rowCounts = async (): Promise<Record<string, number>> => {
  const tables = await db.query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'"
  )
  const names = tables.rows.map((r) => r.table_name).filter((name) => !mutableByDesign.has(name))
  const row = await db.query(
    `select ${names.map((name) => `(select count(*)::int from "${name}") as "${name}"`).join(", ")}`
  )
  return row.rows[0] as Record<string, number>
}

const documented = () => new Set(errorTable.map((e) => `${e.status} ${e.code}`))

/**
 * After an accepted request, until what it set off has landed: a cancel's `deposit_request.expired` goes through
 * the outbox and the stream to a webhook job a moment later, which must not be charged to the next request.
 */
const settled = async () => {
  const until = Date.now() + 10_000
  let last = ""
  while (Date.now() < until) {
    const pending = await db.query<{ n: number }>(
      "select count(*)::int as n from outbox where published_at is null"
    )
    const counts = JSON.stringify(await rowCounts())
    if (pending.rows[0]!.n === 0 && counts === last) return
    last = counts
    await new Promise((r) => setTimeout(r, 200))
  }
}

const send = (request: FuzzRequest): Promise<RawAnswer> => {
  const headers: Record<string, string> = {}
  const via = bySession(request.op) ? "session" : "api_key"
  if (request.credential === "alice") Object.assign(headers, alice.headers(via))
  if (request.credential === "bob") Object.assign(headers, bob.headers(via))
  if (request.credential === "garbage") headers.authorization = "Bearer service_test_garbage"
  if (request.contentType !== undefined && request.body !== undefined)
    headers["content-type"] = request.contentType
  if (request.idempotencyKey !== undefined && request.op.headerParams.includes("idempotency-key")) {
    headers["idempotency-key"] = request.idempotencyKey
  }
  return rawRequest(service.baseUrl, {
    method: request.op.method,
    path: `${request.path}${request.query === "" ? "" : `?${request.query}`}`,
    headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    timeoutMs: ANSWER_WITHIN_MS
  })
}

const summary = new Map<string, Map<number, number>>()

const check = async (request: FuzzRequest) => {
  const before = await rowCounts()
  const answer = await send(request)
  const key = `${request.op.method} ${request.op.path}`
  const statuses = summary.get(key) ?? new Map<number, number>()
  statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
  summary.set(key, statuses)

  const context = `${key} → ${answer.status} ${answer.text.slice(0, 300)}`
  expect(answer.status, context).toBeLessThan(500)
  expect(answer.headers["x-request-id"], context).toBeTruthy()
  if (answer.status >= 400) {
    expect(answer.json?.error?.code, context).toEqual(expect.any(String))
    expect(answer.json?.error?.message, context).toEqual(expect.any(String))
    expect(answer.json?.request_id, context).toBe(answer.headers["x-request-id"])
    expect(documented().has(`${answer.status} ${answer.json?.error?.code}`), context).toBe(true)
    // The edge answers 400 and 413 on any route; everything else must be one the operation declares.
    expect(request.op.statuses.has(answer.status) || [400, 413].includes(answer.status), context).toBe(true)
    const after = await rowCounts()
    const allowed = refusalRecords(request.op)
    const changed = Object.keys(after).filter((t) => after[t] !== before[t] && !allowed.has(t))
    expect(changed, `${context}: a refused request wrote rows`).toEqual([])
  } else await settled()
}

describe("fuzzing every operation of /openapi.json", () => {
  it("answers every hostile request within the bound, in the envelope, with a documented status, writing nothing when it refuses", async () => {
    expect(operations.length).toBeGreaterThanOrEqual(43)
    const started = Date.now()
    // One request on every operation first, so each is reached whatever FUZZ_RUNS is (62 operations drawn 300
    // times at random would miss one about every other run).
    for (const [i, op] of operations.entries()) {
      const [request] = fc.sample(requestFor(op), { seed: SEED + i, numRuns: 1 })
      await check(request!)
    }
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...operations).chain(requestFor), async (request) => {
        await check(request)
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: false, verbose: 1 }
    )
    const seconds = (Date.now() - started) / 1000
    const lines = [...summary.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([op, statuses]) =>
          `${op.padEnd(56)} ${[...statuses.entries()]
            .sort(([a], [b]) => a - b)
            .map(([status, n]) => `${status}×${n}`)
            .join(" ")}`
      )
    console.log(
      `fuzz: ${RUNS} requests (seed ${SEED}) over ${summary.size} operations in ${seconds.toFixed(1)} s\n${lines.join("\n")}`
    )
    // Every operation was reached.
    expect(summary.size).toBe(operations.length)
  }, 600_000)
})
