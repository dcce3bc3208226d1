import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { makeClient } from "../../../src/client/effect"
import { ApiError, createClient } from "../../../src/client/fetch"

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
const envelope = (code: string, message: string) => ({ error: { code, message }, request_id: "req_test" })
const rateLimited = (retryAfter: string) =>
  json(429, envelope("rate_limited", "Too many requests."), { "retry-after": retryAfter })
const hangUp: Step = (req) => req.socket.destroy()
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
    await expect(plain.api.POST("/v1/issuers", { body: { display_name: "x" } as never })).rejects.toThrow()
    expect(unkeyed.seen).toHaveLength(1)
  })

  it("throws the envelope as an ApiError once the tries are spent", async () => {
    const server = await scripted([rateLimited("0")])
    const client = createClient({ baseUrl: server.baseUrl, apiKey: "sk_test", retry: { maxRetries: 2 } })
    const error = await client.getDepositRequest("dr_x").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 429, code: "rate_limited", requestId: "req_test" })
    expect(server.seen).toHaveLength(3)
  })
})

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
    // Not an idempotency question: a 404 is answered once.
    expect(server.seen).toHaveLength(1)
  })
})
