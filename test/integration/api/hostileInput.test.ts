import { randomUUID } from "node:crypto"
import { Effect, Exit } from "effect"
import { createServer } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { merchantClient } from "../../support/Api"
import { countRows } from "../../support/Database"
import { DepositRequests } from "../../../services/depositRequests/DepositRequests"
import { answerClientErrors } from "../../../src/http/middleware/ClientError"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RawAnswer, rawExchange, rawRequest } from "../../support/RawHttp"
import { type RunningService, startService } from "../../support/Service"

// Regression tests for input that once answered 500, 405 or nothing at all (the hardening issue's defects 1-4, 7
// and 8). Every answer must come within the raw client's bound, in the error envelope, with its request id.

let service: RunningService
let merchant: Merchant
let refs: { issuerId: string; payoutAddressId: string }
let customerId: string

beforeAll(async () => {
  service = await startService()
  merchant = await createMerchant(service.databaseUrl)
  const api = merchantClient(service, merchant)
  refs = await api.setup()
  const customer = await api.call<{ id: string }>("POST", "/v1/customers", { name: "Ada" })
  customerId = customer.body.id
})
afterAll(async () => {
  await service?.stop()
})

const send = (
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string>; auth?: boolean } = {}
) =>
  rawRequest(service.baseUrl, {
    method,
    path,
    headers: {
      ...(options.auth === false ? {} : merchant.headers()),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: options.body })
  })

const expectRefused = (answer: RawAnswer, status: number, code: string, param?: string) => {
  expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status, code })
  if (param !== undefined) expect(answer.json?.error?.param).toBe(param)
  expect(answer.json?.request_id).toBe(answer.headers["x-request-id"])
}

/** Every operation that takes a body, from the served document, with made-up ids in its path. */
const bodyOperations = async () => {
  const spec = (await (await service.request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, unknown>>
  }
  const operations: Array<{ method: string; path: string }> = []
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of Object.keys(item)) {
      if (!["post", "patch", "put", "delete"].includes(method)) continue
      operations.push({
        method: method.toUpperCase(),
        path: path.replace(/\{[^}]+\}/g, () => `dr_${randomUUID()}`)
      })
    }
  }
  return operations
}

describe("nesting", () => {
  it("refuses a body nested thousands deep with 400, on every route that takes a body, and writes nothing", async () => {
    const deep = `${"[".repeat(3_000)}${"]".repeat(3_000)}` // 6 KB: under every route's limit
    const before = await countRows(service.databaseUrl)
    const operations = await bodyOperations()
    expect(operations.length).toBeGreaterThanOrEqual(13)
    for (const { method, path } of operations) {
      const answer = await send(method, path, { body: `{"amount":${deep}}` })
      expectRefused(answer, 400, "invalid_request", "body")
      expect(answer.json?.error?.message).toContain("deeper than 32")
    }
    expect(await countRows(service.databaseUrl)).toEqual(before)
  })

  it("still takes the nesting our bodies use", async () => {
    const answer = await send("POST", "/v1/customers", {
      body: JSON.stringify({ name: "Bo", metadata: { a: "1" } })
    })
    expect(answer.status).toBe(201)
  })
})

describe("content types", () => {
  const refusedTypes = [
    "application/merge-patch+json",
    "application/vnd.api+json",
    "text/json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "multipart/form-data",
    "application/json; charset=utf-16",
    "application/jsonp",
    "garbage"
  ]

  it("answers every route that takes a body with 400 for a type we do not take, at once", async () => {
    for (const { method, path } of await bodyOperations()) {
      for (const type of refusedTypes) {
        const withBody = await send(method, path, {
          body: "{}",
          headers: { "content-type": type },
          auth: false
        })
        expectRefused(withBody, 400, "invalid_request", "Content-Type")
        const empty = await send(method, path, {
          headers: { "content-type": type, "content-length": "0" },
          auth: false
        })
        expectRefused(empty, 400, "invalid_request", "Content-Type")
      }
    }
  })

  it("takes application/json with any letter case and a UTF-8 charset", async () => {
    for (const type of ["application/json", "Application/JSON", "application/json; charset=UTF-8"]) {
      const answer = await send("POST", "/v1/customers", {
        body: JSON.stringify({ name: "Cy" }),
        headers: { "content-type": type }
      })
      expect(answer.status).toBe(201)
    }
  })

  it("refuses a body that is not UTF-8", async () => {
    const answer = await send("POST", "/v1/customers", {
      body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])
    })
    expectRefused(answer, 400, "invalid_request", "body")
  })
})

describe("text", () => {
  it("refuses a lone surrogate in any text field, naming the field, and writes nothing", async () => {
    const before = await countRows(service.databaseUrl)
    const cases: Array<[string, string, string, string]> = [
      [
        "POST",
        "/v1/deposit-requests",
        `{"amount":"1.000000","issuer_id":"${refs.issuerId}","payout_address_id":"${refs.payoutAddressId}","heading":"a\\ud800"}`,
        "heading"
      ],
      [
        "POST",
        "/v1/deposit-requests",
        `{"amount":"1.000000","issuer_id":"${refs.issuerId}","payout_address_id":"${refs.payoutAddressId}","reference":"\\udfff"}`,
        "reference"
      ],
      ["POST", "/v1/customers", '{"name":"\\ud800"}', "name"],
      ["POST", "/v1/customers", '{"name":"ok","metadata":{"k\\ud800":"v"}}', "metadata.k\ud800"],
      ["POST", "/v1/issuers", '{"display_name":"x\\udc00y"}', "display_name"],
      ["PATCH", `/v1/customers/${customerId}`, '{"description":"\\ud800"}', "description"],
      ["POST", "/v1/customers", '{"name":"nul\\u0000"}', "name"]
    ]
    for (const [method, path, body, param] of cases) {
      const answer = await send(method, path, { body, headers: { "idempotency-key": randomUUID() } })
      expectRefused(answer, 400, "invalid_request", param)
    }
    expect(await countRows(service.databaseUrl)).toEqual(before)
  })

  it("takes paired surrogates (an emoji written as escapes) and escaped tabs and line breaks", async () => {
    const answer = await send("POST", "/v1/customers", { body: '{"name":"\\ud83d\\ude00 \\t\\n"}' })
    expect(answer.status).toBe(201)
    expect(answer.json).toMatchObject({ name: "\u{1F600} \t\n" })
  })

  it("refuses control characters in query text with 400 naming the parameter", async () => {
    for (const [path, param] of [
      ["/v1/events?type=%00", "type"],
      ["/v1/events?type=a%01b", "type"],
      ["/v1/deposit-requests?status=%00", "status"],
      ["/v1/customers?starting_after=%1f", "starting_after"],
      ["/v1/events?deposit_request_id=x%00", "deposit_request_id"]
    ] as const) {
      expectRefused(await send("GET", path), 400, "invalid_request", param)
    }
  })
})

describe("one tenant's hostile creates beside another's valid ones", () => {
  it("answers every valid create 201 while hostile ones arrive in the same group commit, and hostile ones write nothing", async () => {
    const other = await createMerchant(service.databaseUrl)
    const otherRefs = await merchantClient(service, other).setup()
    const before = await countRows(service.databaseUrl)
    const hostileTexts = ["\\ud800", "a\\udfffb", "\\u0000", "x\\u001b[31m", "\\ud83d"]
    const hostile = Array.from({ length: 20 }, (_, i) =>
      send("POST", "/v1/deposit-requests", {
        headers: { "idempotency-key": randomUUID() },
        body: `{"amount":"1.000000","issuer_id":"${refs.issuerId}","payout_address_id":"${refs.payoutAddressId}","${i % 2 === 0 ? "heading" : "reference"}":"${hostileTexts[i % hostileTexts.length]}"}`
      })
    )
    const valid = Array.from({ length: 20 }, () =>
      rawRequest(service.baseUrl, {
        method: "POST",
        path: "/v1/deposit-requests",
        headers: other.headers("api_key", {
          "content-type": "application/json",
          "idempotency-key": randomUUID()
        }),
        body: JSON.stringify({
          amount: "2.000000",
          issuer_id: otherRefs.issuerId,
          payout_address_id: otherRefs.payoutAddressId
        })
      })
    )
    const [hostileAnswers, validAnswers] = await Promise.all([Promise.all(hostile), Promise.all(valid)])
    expect(validAnswers.map((a) => a.status)).toEqual(Array(20).fill(201))
    expect(hostileAnswers.map((a) => a.status)).toEqual(Array(20).fill(400))
    const after = await countRows(service.databaseUrl)
    expect(after.deposit_requests).toBe((before.deposit_requests ?? 0) + 20)
  })
})

describe("a group commit the database refuses for one member", () => {
  it("commits the batch's other creates when PostgreSQL refuses one member's row", async () => {
    // Past the edge's text rule, straight into the service: the statement itself must not let one row fail the rest.
    const deposits = await service.runtime.runPromise(DepositRequests)
    const honest = await createMerchant(service.databaseUrl)
    const honestRefs = await merchantClient(service, honest).setup()
    const accountId = merchant.accountId.slice("acct_".length)
    const poison = () =>
      Effect.runPromiseExit(
        deposits.create(accountId, `poison-${randomUUID()}`, {
          amount: 1_000_000n,
          heading: "\ud800",
          issuer_id: refs.issuerId,
          payout_address_id: refs.payoutAddressId
        })
      )
    // The first create through the service makes the payout address known, so later ones take the batched path.
    await poison()
    const before = await countRows(service.databaseUrl)
    let sending = true
    const poisons: Array<ReturnType<typeof poison>> = []
    const sender = (async () => {
      while (sending) {
        poisons.push(poison())
        await new Promise((r) => setImmediate(r))
      }
    })()
    const valid = await Promise.all(
      Array.from({ length: 20 }, () =>
        rawRequest(service.baseUrl, {
          method: "POST",
          path: "/v1/deposit-requests",
          headers: honest.headers("api_key", {
            "content-type": "application/json",
            "idempotency-key": randomUUID()
          }),
          body: JSON.stringify({
            amount: "2.000000",
            issuer_id: honestRefs.issuerId,
            payout_address_id: honestRefs.payoutAddressId
          }),
          // The poison flood splits every group commit it joins: on a loaded two-core machine an answer can take
          // seconds. Unanswered is still a failure, just later.
          timeoutMs: 20_000
        })
      )
    )
    sending = false
    await sender
    const exits = await Promise.all(poisons)
    expect(valid.map((a) => a.status)).toEqual(Array(20).fill(201))
    expect(poisons.length).toBeGreaterThan(0)
    expect(exits.every((exit) => Exit.isFailure(exit))).toBe(true)
    const after = await countRows(service.databaseUrl)
    expect(after.deposit_requests).toBe((before.deposit_requests ?? 0) + 20)
    expect(after.idempotency_keys).toBe((before.idempotency_keys ?? 0) + 20)
  })
})

describe("path ids the router cannot take", () => {
  it("answers 404 <resource>_not_found for undecodable and very long ids", async () => {
    const long = `dr_${"a".repeat(4_000)}`
    const cases: Array<[string, string, string]> = [
      ["GET", "/v1/deposit-requests/%FF%FE", "deposit_request_not_found"],
      ["GET", `/v1/deposit-requests/${long}`, "deposit_request_not_found"],
      ["PATCH", `/v1/deposit-requests/${long}`, "deposit_request_not_found"],
      ["GET", `/v1/deposit-requests/${long}/transfers`, "deposit_request_not_found"],
      ["GET", `/v1/customers/${"c".repeat(5_000)}`, "customer_not_found"],
      ["GET", "/v1/payout-addresses/%E0%A4%A", "payout_address_not_found"],
      ["GET", `/v1/webhooks/${long}/deliveries`, "webhook_not_found"],
      ["POST", `/v1/events/${long}/redeliver`, "event_not_found"],
      ["GET", "/v1/payer/deposit-requests/%FF%FE", "deposit_request_not_found"],
      ["POST", `/v1/payer/deposit-requests/${long}/mailbox/start`, "deposit_request_not_found"]
    ]
    for (const [method, path, code] of cases) {
      const answer = await send(method, path, method === "PATCH" ? { body: "{}" } : {})
      expectRefused(answer, 404, code)
    }
  })
})

describe("exact inputs", () => {
  it("takes limit only as plain decimal digits from 1 to 100", async () => {
    for (const limit of ["1e2", "%2B5", "0x10", "5.0", "%205", "05", "0", "101", "-1", ""]) {
      expectRefused(await send("GET", `/v1/deposit-requests?limit=${limit}`), 400, "invalid_request", "limit")
    }
    expect((await send("GET", "/v1/deposit-requests?limit=5")).status).toBe(200)
    expect((await send("GET", "/v1/customers?limit=100")).status).toBe(200)
  })

  it("takes a long poll's version and timeout only as plain decimal digits", async () => {
    const made = await merchantClient(service, merchant).call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    for (const version of ["01", "+1", "1e2", " 1"]) {
      const answer = await send(
        "GET",
        `/v1/deposit-requests/${made.body.id}?wait_for=change&version=${encodeURIComponent(version)}&timeout=1`
      )
      expectRefused(answer, 400, "invalid_request", "version")
    }
    for (const timeout of ["1e1", "0x5", "2.0"]) {
      const answer = await send(
        "GET",
        `/v1/deposit-requests/${made.body.id}?wait_for=change&version=0&timeout=${timeout}`
      )
      expectRefused(answer, 400, "invalid_request", "timeout")
    }
  })

  it("refuses a PATCH without a body, with or without a JSON content type", async () => {
    const before = await countRows(service.databaseUrl)
    const typed = await send("PATCH", `/v1/customers/${customerId}`, {
      headers: { "content-type": "application/json", "content-length": "0" }
    })
    expectRefused(typed, 400, "invalid_request", "body")
    const bare = await send("PATCH", `/v1/customers/${customerId}`, { headers: { "content-length": "0" } })
    expectRefused(bare, 400, "invalid_request", "body")
    expect(await countRows(service.databaseUrl)).toEqual(before)
  })
})

describe("requests Node's parser refuses", () => {
  it("answers headers over Node's limit with 431 in the envelope, with a request id", async () => {
    const answer = await send("GET", "/v1/account", { headers: { "x-padding": "a".repeat(20_000) } })
    expect(answer.status).toBe(431)
    expect(answer.json?.error?.code).toBe("request_headers_too_large")
    expect(answer.json?.request_id).toBe(answer.headers["x-request-id"])
    expect(answer.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("answers a request that is not HTTP with 400 in the envelope", async () => {
    const text = await rawExchange(Number(new URL(service.baseUrl).port), "NOT HTTP AT ALL\r\n\r\n")
    expect(text).toMatch(/^HTTP\/1\.1 400 /)
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as {
      error: { code: string }
      request_id: string
    }
    expect(body.error.code).toBe("invalid_request")
    expect(text.toLowerCase()).toContain(`x-request-id: ${body.request_id}`)
  })

  it("answers a request whose headers never finish arriving with 408 in the envelope", async () => {
    // Node's own request timeouts, shortened on a bare server with the same handler as the service's.
    const server = answerClientErrors(
      createServer(
        { headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 50 },
        (_req, res) => res.end()
      ),
      "http://127.0.0.1:8080"
    )
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as { port: number }).port
      const text = await rawExchange(port, "GET /v1/health HTTP/1.1\r\nhost: x\r\n")
      expect(text).toMatch(/^HTTP\/1\.1 408 /)
      const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as {
        error: { code: string; doc_url: string }
      }
      expect(body.error.code).toBe("request_timeout")
      expect(body.error.doc_url).toBe("http://127.0.0.1:8080/docs/errors#request_timeout")
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
