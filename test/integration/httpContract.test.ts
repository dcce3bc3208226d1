import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startService } from "../support/Service"

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
      error: { code: "route_not_found", message: expect.stringContaining("/v1/nowhere") },
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
