import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

let service: RunningService
beforeAll(async () => {
  service = await startService()
})
afterAll(async () => {
  await service?.stop()
})

const uuidv7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("request ids", () => {
  it("generates a UUIDv7 when the caller sends none", async () => {
    const res = await service.request("/v1/health")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-request-id")).toMatch(uuidv7)
  })

  it("echoes a printable caller value of up to 128 bytes", async () => {
    const id = "a".repeat(128)
    const res = await service.request("/v1/health", { headers: { "x-request-id": id } })
    expect(res.headers.get("x-request-id")).toBe(id)
  })

  it("replaces a value over 128 bytes or with non-printable bytes", async () => {
    const long = await service.request("/v1/health", { headers: { "x-request-id": "a".repeat(129) } })
    expect(long.headers.get("x-request-id")).toMatch(uuidv7)
    const tab = await service.request("/v1/health", { headers: { "x-request-id": "a\tb" } })
    expect(tab.headers.get("x-request-id")).toMatch(uuidv7)
  })

  it("puts the same id in an error body", async () => {
    const res = await service.request("/v1/nowhere", { headers: { "x-request-id": "trace-42" } })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({
      error: {
        code: "route_not_found",
        message: expect.stringContaining("/v1/nowhere"),
        doc_url: `${service.baseUrl}/docs/errors#route_not_found`
      },
      request_id: "trace-42"
    })
  })
})

describe("routes and methods", () => {
  it("answers 405 method_not_allowed with Allow for a known path", async () => {
    const res = await service.request("/v1/health", { method: "DELETE" })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("GET")
    const body = (await res.json()) as { error: { code: string } }
    expect(body.error.code).toBe("method_not_allowed")
  })

  it("serves OpenAPI 3.1 and the offline docs", async () => {
    const spec = (await (await service.request("/openapi.json")).json()) as { openapi: string }
    expect(spec.openapi).toBe("3.1.0")
    const docs = await service.request("/docs")
    expect(docs.status).toBe(200)
    const html = await docs.text()
    expect(html).toContain("<html")
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//)
  })
})

describe("bodies", () => {
  let merchant: Merchant
  beforeAll(async () => {
    merchant = await createMerchant(service.databaseUrl)
  })
  const post = (body: string | undefined, headers: Record<string, string> = {}) =>
    service.request("/v1/account/session", {
      method: "POST",
      headers: merchant.headers("session", { "content-type": "application/json", ...headers }),
      ...(body === undefined ? {} : { body })
    })
  const errorOf = async (res: Response) =>
    ((await res.json()) as { error: { code: string; param?: string } }).error

  it("answers malformed JSON with 400 invalid_request naming the body", async () => {
    const res = await post("{not json")
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toMatchObject({ code: "invalid_request", param: "body" })
  })

  it("answers a body without a JSON content type with 400 naming Content-Type", async () => {
    const res = await post("{}", { "content-type": "text/plain" })
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toMatchObject({ code: "invalid_request", param: "Content-Type" })
  })

  it("rejects unknown fields and wrong types, naming the field", async () => {
    const unknown = await post(JSON.stringify({ surprise: 1 }))
    expect(unknown.status).toBe(400)
    expect(await errorOf(unknown)).toMatchObject({ code: "invalid_request", param: "surprise" })
    const array = await post("[]")
    expect(array.status).toBe(400)
  })

  it("refuses a declared length over the route limit with 413 before reading", async () => {
    const big = JSON.stringify({ pad: "x".repeat(17 * 1024) })
    const res = await service.request("/v1/account/api-key", {
      method: "POST",
      headers: merchant.headers("session", { "content-type": "application/json" }),
      body: big
    })
    expect(res.status).toBe(413)
    expect(await errorOf(res)).toMatchObject({ code: "payload_too_large" })
  })

  it("counts a chunked body while reading and answers 413 past the limit", async () => {
    const chunks = (async function* () {
      for (let i = 0; i < 20; i++) yield new TextEncoder().encode("x".repeat(1024))
    })()
    const res = await service.request("/v1/account/api-key", {
      method: "POST",
      headers: merchant.headers("session", { "content-type": "application/json" }),
      body: ReadableStream.from(chunks),
      duplex: "half"
    } as RequestInit)
    expect(res.status).toBe(413)
    expect(res.headers.get("x-request-id")).toBeTruthy()
  })

  it("accepts a body-less POST as an empty object", async () => {
    merchant = await createMerchant(service.databaseUrl)
    const res = await post(undefined, {})
    expect(res.status).toBe(201)
  })
})
