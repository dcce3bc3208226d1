import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../../support/Database"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type ServiceProcess, spawnService } from "../../support/Process"

/**
 * Issue 7: the dispatcher killed mid-delivery loses nothing. The service runs as a real process; the receiver
 * holds the first delivery without answering; the process is SIGKILLed with the attempt in flight. A new process
 * on the same database takes the job once its claim has lapsed and delivers the same event (same id, same bytes).
 */
let db: { url: string; drop: () => Promise<void> }
let merchant: Merchant
let dataDir: string
let receiver: Server
let port: number
const received: Array<{ id: string; body: string }> = []
const held: Array<ServerResponse> = []
/** How the receiver answers: holding the first delivery forever (for the kill), or after a delay. */
let answering: { readonly holdFirst: true } | { readonly holdFirst: false; readonly delayMs: number } = {
  holdFirst: true
}

const env = () => ({
  DATABASE_URL: db.url,
  NATS_URL: "",
  DATA_DIR: dataDir,
  // Sandbox only: lets deliveries reach a plain-HTTP receiver on loopback.
  WEBHOOKS_ALLOW_PRIVATE: "true",
  WEBHOOK_CLAIM_TTL_MS: "3000",
  WEBHOOK_FIRST_RETRY_MS: "500"
})

beforeAll(async () => {
  db = await createTestDatabase()
  merchant = await createMerchant(db.url)
  dataDir = mkdtempSync(join(tmpdir(), "deposits-webhook-crash-"))
  receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ""
    req.on("data", (chunk) => {
      body += chunk
    })
    req.on("end", () => {
      received.push({ id: String(req.headers["service-event-id"]), body })
      // The first delivery is held: its sender is killed while waiting for the answer.
      if (answering.holdFirst && received.length === 1) held.push(res)
      else setTimeout(() => res.writeHead(200).end("ok"), answering.holdFirst ? 0 : answering.delayMs)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  port = (receiver.address() as { port: number }).port
})
afterAll(async () => {
  for (const res of held) res.destroy()
  await new Promise((r) => receiver?.close(r))
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

const waitFor = async (check: () => boolean, ms: number) => {
  const until = Date.now() + ms
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  expect(check()).toBe(true)
}

describe("a dispatcher killed mid-delivery", () => {
  it("loses nothing: another process delivers the same event, same bytes, once the claim lapses", async () => {
    let first: ServiceProcess | undefined = await spawnService(env())
    let second: ServiceProcess | undefined
    try {
      const call = (service: ServiceProcess, method: string, path: string, body?: unknown) =>
        fetch(`${service.baseUrl}${path}`, {
          method,
          headers: merchant.headers("api_key", { "content-type": "application/json" }),
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      const endpoint = (await (
        await call(first, "POST", "/v1/webhooks", { url: `http://127.0.0.1:${port}/hooks` })
      ).json()) as { id: string }
      expect((await call(first, "POST", `/v1/webhooks/${endpoint.id}/test`)).status).toBe(202)
      await waitFor(() => received.length === 1, 15_000)

      // The attempt is in flight (the receiver holds it): kill the process.
      first.child.kill("SIGKILL")
      await new Promise((r) => first!.child.once("exit", r))
      first = undefined
      second = await spawnService(env())
      await waitFor(() => received.length === 2, 20_000)
      expect(received[1]).toEqual(received[0])

      const client = new pg.Client({ connectionString: db.url })
      await client.connect()
      try {
        // The answer is in; the outcome is recorded right after the dispatcher reads it.
        const states = async () =>
          (await client.query<{ state: string }>("select state from webhook_jobs")).rows
        const recorded = Date.now() + 10_000
        while (Date.now() < recorded && (await states())[0]?.state !== "succeeded") {
          await new Promise((r) => setTimeout(r, 50))
        }
        expect(await states()).toEqual([{ state: "succeeded" }])
        const log = await client.query<{ outcome: string }>("select outcome from webhook_deliveries")
        // The killed attempt never came back to be recorded; the one that was answered is.
        expect(log.rows).toEqual([{ outcome: "succeeded" }])
      } finally {
        await client.end()
      }
      await new Promise((r) => setTimeout(r, 1500))
      expect(received).toHaveLength(2)
    } finally {
      await first?.stop("SIGKILL")
      await second?.stop()
    }
  }, 120_000)
})

describe("a dispatcher stopped with SIGTERM mid-delivery", () => {
  it("finishes the attempt under way and records it before it exits; nothing is sent again", async () => {
    received.length = 0
    answering = { holdFirst: false, delayMs: 1500 }
    const other = await createMerchant(db.url)
    let service: ServiceProcess | undefined = await spawnService(env())
    try {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${service!.baseUrl}${path}`, {
          method,
          headers: other.headers("api_key", { "content-type": "application/json" }),
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      const endpoint = (await (
        await call("POST", "/v1/webhooks", { url: `http://127.0.0.1:${port}/graceful` })
      ).json()) as {
        id: string
      }
      expect((await call("POST", `/v1/webhooks/${endpoint.id}/test`)).status).toBe(202)
      await waitFor(() => received.length === 1, 15_000)

      // The receiver answers in 1.5 s; the service is asked to stop now.
      const stopping = Date.now()
      service.child.kill("SIGTERM")
      const code = await new Promise<number | null>((r) => service!.child.once("exit", r))
      service = undefined
      expect(code).toBe(0)
      expect(Date.now() - stopping).toBeGreaterThanOrEqual(1000)

      const client = new pg.Client({ connectionString: db.url })
      await client.connect()
      try {
        const jobs = await client.query<{ state: string; attempts: number }>(
          "select j.state, j.attempts from webhook_jobs j join webhook_endpoints e on e.id = j.endpoint_id where e.url like '%/graceful'"
        )
        expect(jobs.rows).toEqual([{ state: "succeeded", attempts: 1 }])
        const log = await client.query<{ outcome: string; response_status: number }>(
          "select d.outcome, d.response_status from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.url like '%/graceful'"
        )
        expect(log.rows).toEqual([{ outcome: "succeeded", response_status: 200 }])
      } finally {
        await client.end()
      }
      expect(received).toHaveLength(1)
    } finally {
      await service?.stop("SIGKILL")
    }
  })
})
