import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { errorDetails, makeClient } from "../../../src/client/effect"
import {
  ApiError,
  ConnectionError,
  createClient,
  isApiError,
  TimeoutError,
  toApiError,
  UnexpectedResponseError
} from "../../../src/client/fetch"

// Both clients' transports against a real HTTP server that answers from a script: what they try again, what they
// give back, and how long they wait.

interface Seen {
  readonly method: string
  readonly url: string
  readonly idempotencyKey: string | undefined
  readonly authorization: string | undefined
  readonly at: number
}

type Step = (req: IncomingMessage, res: ServerResponse) => void

const servers: Array<{ close: () => void }> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** A server that answers the n-th request with the n-th step (the last step from then on). */
const scripted = async (steps: ReadonlyArray<Step>) => {
  const seen: Array<Seen> = []
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        idempotencyKey: req.headers["idempotency-key"] as string | undefined,
        authorization: req.headers.authorization,
        at: Date.now()
      })
      steps[Math.min(seen.length, steps.length) - 1]!(req, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  servers.push({ close: () => server.close() })
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(JSON.stringify(body))
  }
const envelope = (code: string, message: string) => ({
  error: { code, message, doc_url: `https://deposits.example/docs/errors#${code}` },
  request_id: "req_test"
})
const rateLimited = (retryAfter: string) =>
  json(429, envelope("rate_limited", "Too many requests."), { "retry-after": retryAfter })
const hangUp: Step = (req) => req.socket.destroy()
/** Headers never come: the socket stays open until the client gives up. */
const silent: Step = () => {}
/** Headers and half the body, then nothing. */
const stalledBody: Step = (_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": "100" })
  res.write('{"id":"dr_')
}
const health = { status: "ok", environment: "sandbox", chain_id: 10143, database: "ok", token: null }
const order = { amount: "1.000000", issuer_id: "iss_x", payout_address_id: "pa_x" }

describe("the fetch client's transport", () => {
  it("waits out Retry-After on a 429 and replays the create with the same key", async () => {
    const server = await scripted([rateLimited("1"), json(201, { id: "dr_1" })])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test" })
    const created = await client.createDepositRequest(order as never)
    expect(created.id).toBe("dr_1")
    expect(server.seen).toHaveLength(2)
    expect(server.seen[0]!.idempotencyKey).toMatch(/^client-[0-9a-f-]{36}$/)
    expect(server.seen[1]!.idempotencyKey).toBe(server.seen[0]!.idempotencyKey)
    expect(server.seen[1]!.at - server.seen[0]!.at).toBeGreaterThanOrEqual(950)
    expect(server.seen[0]!.authorization).toBe("Bearer sk_test")
  })

  it("tries a keyed create again after the connection drops, but not a POST without a key", async () => {
    const keyed = await scripted([hangUp, json(201, { id: "dr_2" })])
    const client = createClient({ baseUrl: keyed.baseUrl, apiKey: "sk_test" })
    expect((await client.createDepositRequest(order as never, { idempotencyKey: "k-1" })).id).toBe("dr_2")
    expect(keyed.seen.map((s) => s.idempotencyKey)).toEqual(["k-1", "k-1"])

    const unkeyed = await scripted([hangUp, json(201, { id: "iss_1" })])
    const plain = createClient({ baseUrl: unkeyed.baseUrl, apiKey: "sk_test" })
    const error = await plain.api
      .POST("/v1/issuers", { body: { display_name: "x" } as never })
      .catch((e) => e)
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).toMatchObject({ operation: "POST /v1/issuers" })
    expect(unkeyed.seen).toHaveLength(1)
  })

  it("never tries a POST without a key again, not even after a 429 or a 503", async () => {
    for (const refusal of [rateLimited("0"), json(503, envelope("service_unavailable", "Down."))]) {
      const server = await scripted([refusal, json(201, { id: "iss_1" })])
      const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test" })
      const error = await client.api
        .POST("/v1/issuers", { body: { display_name: "x" } as never })
        .then(unwrapOrThrow)
        .catch((e: unknown) => e)
      expect(isApiError(error, "POST /v1/issuers")).toBe(true)
      expect(server.seen).toHaveLength(1)
    }
  })

  it("throws the envelope as an ApiError of its operation once the tries are spent", async () => {
    const server = await scripted([rateLimited("0")])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test", retry: { maxRetries: 2 } })
    const error = await client.getDepositRequest("dr_x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({
      operation: "GET /v1/deposit-requests/{id}",
      status: 429,
      code: "rate_limited",
      requestId: "req_test",
      docUrl: "https://deposits.example/docs/errors#rate_limited",
      retryAfterSeconds: 0
    })
    expect(isApiError(error, "GET /v1/deposit-requests/{id}")).toBe(true)
    expect(isApiError(error, "POST /v1/deposit-requests")).toBe(false)
    expect(server.seen).toHaveLength(3)
  })

  it("spreads a burst's retries over the jitter window, each no earlier than Retry-After", async () => {
    // Every first try is refused with Retry-After: 1; the retries come back at 1 s plus a draw below 250 ms.
    const server = await scripted([
      ...Array.from({ length: 40 }, () => rateLimited("1")),
      json(200, { id: "dr_1", status: "ready" })
    ])
    const clients = Array.from({ length: 40 }, () =>
      createClient({ baseUrl: server.baseUrl, apiKey: "sk_test" })
    )
    const started = Date.now()
    await Promise.all(clients.map((c) => c.getDepositRequest("dr_1")))
    const retries = server.seen.slice(40).map((s) => s.at - started)
    expect(retries).toHaveLength(40)
    expect(Math.min(...retries)).toBeGreaterThanOrEqual(990)
    expect(Math.max(...retries)).toBeLessThan(1600)
    // Uniform draws below 250 ms: 40 of them span more than 100 ms (a fixed wait would span a few ms).
    expect(Math.max(...retries) - Math.min(...retries)).toBeGreaterThan(100)
  })

  it("times out a try whose headers never come, retries a read, and throws a TimeoutError", async () => {
    const server = await scripted([silent])
    const client = createClient({
      baseUrl: server.baseUrl,
      apiKey: "sk_test",
      timeoutMs: 200,
      retry: { maxRetries: 1, baseDelayMs: 10 }
    })
    const started = Date.now()
    const error = await client.getDepositRequest("dr_x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error).toMatchObject({ operation: "GET /v1/deposit-requests/{id}", timeoutMs: 200 })
    expect(server.seen).toHaveLength(2)
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it("times out a body that stops half way, and a call's own timeoutMs overrides the client's", async () => {
    const server = await scripted([stalledBody])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test", retry: { maxRetries: 0 } })
    const started = Date.now()
    const error = await client.getDepositRequest("dr_x", { timeoutMs: 300 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it("does not try a timed-out POST without a key again", async () => {
    const server = await scripted([silent])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test", timeoutMs: 150 })
    const error = await client.api
      .POST("/v1/issuers", { body: { display_name: "x" } as never })
      .catch((e) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect(server.seen).toHaveLength(1)
  })

  it("an AbortSignal cancels a try in flight and a wait between tries, with the signal's reason", async () => {
    const hanging = await scripted([silent])
    const client = createClient({ baseUrl: hanging.baseUrl, apiKey: "sk_test" })
    const started = Date.now()
    const inFlight = await client
      .getDepositRequest("dr_x", { signal: AbortSignal.timeout(150) })
      .catch((e: unknown) => e)
    expect(inFlight).toMatchObject({ name: "TimeoutError" })
    expect(inFlight).not.toBeInstanceOf(TimeoutError)
    expect(Date.now() - started).toBeLessThan(1000)

    const refusing = await scripted([rateLimited("30")])
    const waiting = createClient({ baseUrl: refusing.baseUrl, apiKey: "sk_test" })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error("the shopper left")), 200)
    const during = Date.now()
    const inWait = await waiting
      .getDepositRequest("dr_x", { signal: controller.signal })
      .catch((e: unknown) => e)
    expect(inWait).toMatchObject({ message: "the shopper left" })
    expect(Date.now() - during).toBeLessThan(1000)
    expect(refusing.seen).toHaveLength(1)
  })

  it("gives an error answer that is not the envelope as an UnexpectedResponseError", async () => {
    const server = await scripted([
      (_req, res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>")
    ])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test", retry: { maxRetries: 0 } })
    const error = await client.getDepositRequest("dr_x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UnexpectedResponseError)
    expect(error).toMatchObject({ status: 502, bodyExcerpt: "<h1>Bad gateway</h1>" })
  })

  it("walks any list through next_cursor, and sends integer query values as their digits", async () => {
    const page = (items: Array<{ id: string }>, next: string | null) =>
      json(200, { deliveries: items, next_cursor: next })
    const server = await scripted([
      page([{ id: "whd_1" }, { id: "whd_2" }], "whd_2"),
      page([{ id: "whd_3" }], null)
    ])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test" })
    const ids: Array<string> = []
    for await (const d of client.list("/v1/webhooks/{id}/deliveries", {
      path: { id: "wh_1" },
      query: { limit: 2 }
    }))
      ids.push(d.id)
    expect(ids).toEqual(["whd_1", "whd_2", "whd_3"])
    expect(server.seen.map((s) => s.url)).toEqual([
      "/v1/webhooks/wh_1/deliveries?limit=2",
      "/v1/webhooks/wh_1/deliveries?limit=2&starting_after=whd_2"
    ])
  })
})

const unwrapOrThrow = <T>(result: { data?: T; error?: unknown; response: Response }) => {
  if (result.error !== undefined) throw toApiError(result.error, result.response)
  return result.data
}

describe("the Effect client's transport", () => {
  const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(Effect.either(effect))

  it("waits out Retry-After on a 429 and answers the decoded body", async () => {
    const server = await scripted([rateLimited("1"), json(200, health)])
    const result = await run(
      Effect.flatMap(makeClient({ baseUrl: server.baseUrl, apiKey: "sk_test" }), (c) =>
        c.health.health()
      ).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(result).toMatchObject({ _tag: "Right", right: health })
    expect(server.seen).toHaveLength(2)
    expect(server.seen[1]!.at - server.seen[0]!.at).toBeGreaterThanOrEqual(950)
    expect(server.seen[0]!.authorization).toBe("Bearer sk_test")
  })

  it("fails with the contract's typed error once the tries are spent", async () => {
    const server = await scripted([rateLimited("0")])
    const result = await run(
      Effect.flatMap(
        makeClient({ baseUrl: server.baseUrl, apiKey: "sk_test", retry: { maxRetries: 1 } }),
        (c) => c.waitForChange("dr_x", "1", { timeout: 1 })
      ).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(result).toMatchObject({
      _tag: "Left",
      left: { _tag: "RateLimited", message: "Too many requests.", retryAfterSeconds: 0 }
    })
    expect(server.seen).toHaveLength(2)
    expect(server.seen[0]!.url).toBe("/v1/deposit-requests/dr_x?wait_for=change&version=1&timeout=1")
  })

  it("decodes an error envelope into the contract's class, and a 404's code into its resource", async () => {
    const server = await scripted([
      json(404, envelope("deposit_request_not_found", "No deposit request dr_x."), {
        "x-request-id": "req_test"
      })
    ])
    const result = await run(
      Effect.flatMap(makeClient({ baseUrl: server.baseUrl, apiKey: "sk_test" }), (c) =>
        c.waitForChange("dr_x", "1", { timeout: 1 })
      ).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(result).toMatchObject({
      _tag: "Left",
      left: { _tag: "NotFound", resource: "deposit_request", message: "No deposit request dr_x." }
    })
    expect(errorDetails(result._tag === "Left" ? result.left : undefined)).toEqual({
      docUrl: "https://deposits.example/docs/errors#deposit_request_not_found",
      requestId: "req_test"
    })
    // Not an idempotency question: a 404 is answered once.
    expect(server.seen).toHaveLength(1)
  })
})
