import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { merchantClient } from "../../support/Api"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 51: Stoplight Prism as a validating proxy in front of the live service, with the served document. Prism
 * checks each request and each answer (status, body, declared headers) and names what breaks the document in
 * `sl-violations`. A planted wrong field on a success answer shows the check can fail.
 */
let service: RunningService
let merchant: Merchant
let dir: string
const children: Array<ChildProcess> = []
let planted: Server

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

const startPrism = async (upstream: string) => {
  const port = await freePort()
  const child = spawn(
    "node_modules/.bin/prism",
    ["proxy", join(dir, "openapi.json"), upstream, "-p", String(port), "-h", "127.0.0.1", "--errors=false"],
    { stdio: ["ignore", "pipe", "pipe"] }
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

let prism: string
let prismOnPlanted: string

beforeAll(async () => {
  service = await startService({ config: { rateLimitCapacity: 100_000 } })
  merchant = await createMerchant(service.databaseUrl)
  dir = mkdtempSync(join(tmpdir(), "prism-"))
  writeFileSync(join(dir, "openapi.json"), await (await service.request("/openapi.json")).text())
  // An upstream that answers as the service does, but with one wrong field in GET /v1/account.
  planted = createServer(async (req, res) => {
    const upstream = await fetch(`${service.baseUrl}${req.url}`, {
      method: req.method ?? "GET",
      headers: { authorization: req.headers.authorization ?? "" }
    })
    const body = (await upstream.json()) as Record<string, unknown>
    const headers: Record<string, string> = {}
    upstream.headers.forEach((value, name) => {
      if (name !== "content-length" && name !== "content-encoding") headers[name] = value
    })
    res.writeHead(upstream.status, headers).end(JSON.stringify({ ...body, id: 42 }))
  }).listen(0, "127.0.0.1")
  await new Promise((resolve) => planted.once("listening", resolve))
  prism = await startPrism(service.baseUrl)
  prismOnPlanted = await startPrism(`http://127.0.0.1:${(planted.address() as AddressInfo).port}`)
}, 180_000)

afterAll(async () => {
  for (const child of children) child.kill()
  planted?.close()
  await service?.stop()
})

describe("Prism in front of the service", () => {
  it("finds no violation in a sample of every kind of answer, headers included", async () => {
    const refs = await merchantClient(service, merchant).setup()
    const json = (via: "api_key" | "session" = "api_key", extra: Record<string, string> = {}) =>
      merchant.headers(via, { "content-type": "application/json", ...extra })
    const key = randomUUID()
    const create = {
      amount: "25.000000",
      issuer_id: refs.issuerId,
      payout_address_id: refs.payoutAddressId,
      heading: "Order 1"
    }
    const calls: Array<readonly [string, string, RequestInit]> = [
      ["200 health", "/v1/health", {}],
      ["200 account", "/v1/account", { headers: merchant.headers() }],
      ["401 account", "/v1/account", {}],
      [
        "201 create",
        "/v1/deposit-requests",
        { method: "POST", headers: json("api_key", { "idempotency-key": key }), body: JSON.stringify(create) }
      ],
      [
        "200 replay",
        "/v1/deposit-requests",
        { method: "POST", headers: json("api_key", { "idempotency-key": key }), body: JSON.stringify(create) }
      ],
      [
        "409 conflict",
        "/v1/deposit-requests",
        {
          method: "POST",
          headers: json("api_key", { "idempotency-key": key }),
          body: JSON.stringify({ ...create, amount: "26.000000" })
        }
      ],
      ["200 list", "/v1/deposit-requests?limit=5", { headers: merchant.headers() }],
      ["404 one", `/v1/deposit-requests/dr_${randomUUID()}`, { headers: merchant.headers() }],
      ["200 customers", "/v1/customers", { headers: merchant.headers() }],
      ["200 webhooks", "/v1/webhooks", { headers: merchant.headers() }],
      ["200 events", "/v1/events", { headers: merchant.headers() }],
      ["200 members (session)", "/v1/account/members", { headers: merchant.headers("session") }],
      ["401 members (api key)", "/v1/account/members", { headers: merchant.headers() }],
      ["200 audit log", "/v1/account/audit-log", { headers: merchant.headers("session") }],
      ["200 reconciliation", "/v1/reconciliation", { headers: merchant.headers() }]
    ]
    const violations: Array<string> = []
    for (const [label, path, init] of calls) {
      const res = await fetch(`${prism}${path}`, init)
      await res.text()
      expect([label, res.status]).toEqual([label, Number(label.slice(0, 3))])
      // Request violations are what the error answers are about (a missing credential, say); the answers
      // themselves must have none.
      const found = JSON.parse(res.headers.get("sl-violations") ?? "[]") as Array<{ location: Array<string> }>
      for (const v of found.filter((v) => v.location[0] === "response"))
        violations.push(`${label}: ${JSON.stringify(v)}`)
    }
    expect(violations).toEqual([])
  }, 120_000)

  it("flags a wrong field on a success answer (the check can fail)", async () => {
    const res = await fetch(`${prismOnPlanted}/v1/account`, { headers: merchant.headers() })
    expect(res.status).toBe(200)
    expect((await res.json()) as { id: unknown }).toMatchObject({ id: 42 })
    expect(res.headers.get("sl-violations") ?? "").toMatch(/id/)
  }, 60_000)
})
