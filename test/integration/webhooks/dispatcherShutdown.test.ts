import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TOTAL_TIMEOUT_MS } from "../../../services/webhooks/HttpsWebhookSender"
import { DISPATCH_PER_ENDPOINT } from "../../../services/webhooks/WebhookDispatcher"
import { createTestDatabase } from "../../support/Database"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { spawnService } from "../../support/Process"

/**
 * Found by the chaos run (issue 39): a SIGTERM while an endpoint that never answers has more jobs in line than
 * attempts under way. The attempts under way finish (within the sender's total limit) and are recorded; no worker
 * takes another job once the stop began, so the process exits within that limit, not after the whole line.
 */
let db: { url: string; drop: () => Promise<void> }
let merchant: Merchant
let dataDir: string
let receiver: Server
let port: number
const held: Array<{ res: ServerResponse; at: number }> = []

beforeAll(async () => {
  db = await createTestDatabase()
  merchant = await createMerchant(db.url)
  dataDir = mkdtempSync(join(tmpdir(), "deposits-dispatcher-stop-"))
  receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    held.push({ res, at: Date.now() })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  port = (receiver.address() as { port: number }).port
})
afterAll(async () => {
  for (const { res } of held) res.destroy()
  receiver.closeAllConnections()
  await new Promise((r) => receiver?.close(r))
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("a dispatcher stopped while a silent endpoint has jobs in line", () => {
  it("finishes the attempts under way, starts no other, and exits within the sender's limit", async () => {
    const service = await spawnService({
      DATABASE_URL: db.url,
      NATS_URL: "",
      DATA_DIR: dataDir,
      // Sandbox only: lets deliveries reach a plain-HTTP receiver on loopback.
      WEBHOOKS_ALLOW_PRIVATE: "true"
    })
    try {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${service.baseUrl}${path}`, {
          method,
          headers: merchant.headers("api_key", { "content-type": "application/json" }),
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      const endpoint = (await (
        await call("POST", "/v1/webhooks", { url: `http://127.0.0.1:${port}/silent` })
      ).json()) as { id: string }
      // Three times the endpoint's share of attempts: the rest wait in its line.
      for (let i = 0; i < 3 * DISPATCH_PER_ENDPOINT; i++)
        expect((await call("POST", `/v1/webhooks/${endpoint.id}/test`)).status).toBe(202)
      const until = Date.now() + 15_000
      while (held.length < DISPATCH_PER_ENDPOINT && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50))
      expect(held).toHaveLength(DISPATCH_PER_ENDPOINT)

      const stopping = Date.now()
      service.child.kill("SIGTERM")
      const code = await new Promise<number | null>((r) => service.child.once("exit", r))
      expect(code).toBe(0)
      // The attempts under way end at the sender's total limit; before the fix every worker went on through its
      // line, one after the other, and the exit came minutes later.
      expect(Date.now() - stopping).toBeLessThan(TOTAL_TIMEOUT_MS + 5_000)
      expect(held.filter((h) => h.at >= stopping)).toEqual([])
    } finally {
      await service.stop("SIGKILL")
    }
  }, 90_000)
})
