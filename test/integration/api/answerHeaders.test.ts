import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 46: every JSON answer carries `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` (answers
 * carry secrets once: session tokens, API keys, webhook secrets), and HSTS when the service is served behind https.
 * The walk takes every operation the OpenAPI description lists, as a merchant and as nobody, so a route added
 * later is held to it without naming it here.
 */
let plain: RunningService
let secure: RunningService
let merchant: Merchant
beforeAll(async () => {
  plain = await startService()
  secure = await startService({ config: { publicBaseUrl: Option.some("https://pay.example.test") } })
  merchant = await createMerchant(plain.databaseUrl)
}, 120_000)
afterAll(async () => {
  await plain?.stop()
  await secure?.stop()
})

const idFor = (name: string) => {
  const prefix = /payout/.test(name) ? "pa" : /deposit|request/.test(name) ? "dr" : "xx"
  return `${prefix}_0190f5f0-0000-7000-8000-000000000000`
}

interface Operation {
  readonly method: string
  readonly path: string
}

const operationsOf = async (service: RunningService): Promise<Array<Operation>> => {
  const spec = (await (await service.request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, unknown>>
  }
  const operations: Array<Operation> = []
  for (const [template, methods] of Object.entries(spec.paths))
    for (const method of Object.keys(methods))
      if (["get", "post", "patch", "delete", "put"].includes(method))
        operations.push({
          method: method.toUpperCase(),
          path: template.replace(/\{([^}]+)\}/g, (_, name: string) => idFor(name))
        })
  return operations
}

const call = (service: RunningService, op: Operation, headers: Record<string, string>) =>
  service.request(op.path, {
    method: op.method,
    headers:
      op.method === "GET" || op.method === "DELETE"
        ? headers
        : { ...headers, "content-type": "application/json" },
    ...(op.method === "GET" || op.method === "DELETE" ? {} : { body: "{}" })
  })

describe("every JSON answer", () => {
  it("is no-store and nosniff on every operation of the contract, signed in or not; no HSTS over plain http", async () => {
    const operations = await operationsOf(plain)
    expect(operations.length).toBeGreaterThan(40)
    const walked: Array<string> = []
    // Reads and refusals first, then the writes, so a key rotation late in the walk cannot hide earlier routes.
    const ordered = [...operations].sort((a, b) => Number(a.method !== "GET") - Number(b.method !== "GET"))
    for (const op of ordered) {
      for (const headers of [{}, merchant.headers("session")]) {
        const res = await call(plain, op, headers)
        await res.arrayBuffer()
        const type = res.headers.get("content-type") ?? ""
        if (!type.startsWith("application/json")) continue
        const seen = `${op.method} ${op.path} → ${res.status}`
        expect(res.headers.get("cache-control"), seen).toBe("no-store")
        expect(res.headers.get("x-content-type-options"), seen).toBe("nosniff")
        expect(res.headers.get("strict-transport-security"), seen).toBeNull()
        walked.push(seen)
      }
    }
    // Both kinds of answer were met: successes and refusals.
    expect(walked.some((w) => / → 2\d\d$/.test(w))).toBe(true)
    expect(walked.some((w) => / → 4\d\d$/.test(w))).toBe(true)
    expect(walked.length).toBeGreaterThan(operations.length)
  }, 120_000)

  it("carries HSTS behind https: answers, errors, preflights and pages", async () => {
    const answers = [
      await secure.request("/v1/health"),
      await secure.request("/v1/account"),
      await secure.request("/v1/nowhere"),
      await secure.request("/v1/deposit_requests", {
        method: "OPTIONS",
        headers: { origin: "https://pay.example.test", "access-control-request-method": "POST" }
      }),
      await secure.request("/")
    ]
    for (const res of answers) {
      await res.arrayBuffer()
      expect(res.headers.get("strict-transport-security"), `${res.url} ${res.status}`).toBe(
        "max-age=63072000; includeSubDomains"
      )
      expect(res.headers.get("x-content-type-options"), res.url).toBe("nosniff")
    }
    // A route that says how it may be cached keeps its own rule.
    const script = await secure.request("/favicon.ico")
    await script.arrayBuffer()
    expect(script.headers.get("cache-control")).not.toBe("no-store")
  }, 60_000)

  it("answered by Node's parser or a closing server carries the same headers", async () => {
    const { connect } = await import("node:net")
    const port = Number(new URL(plain.baseUrl).port)
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () =>
        socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
      )
      let text = ""
      socket.on("data", (d) => {
        text += d.toString()
      })
      socket.on("end", () => resolve(text))
      socket.on("error", reject)
    })
    expect(raw).toMatch(/^HTTP\/1\.1 400/)
    expect(raw.toLowerCase()).toContain("cache-control: no-store")
    expect(raw.toLowerCase()).toContain("x-content-type-options: nosniff")
  })
})
