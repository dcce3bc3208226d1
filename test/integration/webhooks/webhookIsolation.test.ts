import { createServer, type Server } from "node:https"
import type { Socket } from "node:net"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

// No endpoint may hold up another's deliveries, and disabling an endpoint leaves a log that promises nothing.

const HOST = "isolated-hooks.example.test"
const tls = makeCertificates(HOST)

let service: RunningService
let api: MerchantClient
let db: pg.Client
let hanging: { port: number; close: () => Promise<void> }

/** An HTTPS receiver that takes every request and never answers: each attempt to it lasts the 10 s limit. */
const startHangingReceiver = async () => {
  const sockets = new Set<Socket>()
  const server: Server = createServer(tls, () => {})
  server.on("secureConnection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

beforeAll(async () => {
  hanging = await startHangingReceiver()
  service = await startService({
    webhookNetwork: localReceiverNetwork(HOST, tls.ca),
    config: { webhookFirstRetryMs: 200, rateLimitCapacity: 10_000 }
  })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
  db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await service?.stop()
  await hanging?.close()
})

const endpoint = async (port: number, path: string) =>
  (await api.call<{ id: string }>("POST", "/v1/webhooks", { url: `https://${HOST}:${port}/${path}` })).body.id

interface LoggedAttempt {
  readonly attempt: number
  readonly outcome: string
  readonly attempted_at: Date
  readonly next_attempt_at: Date | null
}
/** Attempts straight from the log table: the API rounds times to the second, lateness needs milliseconds. */
const attemptsOf = async (endpointId: string) =>
  (
    await db.query<LoggedAttempt>(
      `select attempt, outcome, attempted_at, next_attempt_at from webhook_deliveries
       where endpoint_id = $1 order by attempt`,
      [endpointId.slice(3)]
    )
  ).rows

const waitUntil = async (check: () => Promise<boolean>, ms: number) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`not within ${ms} ms`)
}

describe("delivery isolation", () => {
  it("delivers another endpoint's first attempt and retries on time while one endpoint hangs every worker it can", async () => {
    const flaky = await startReceiver(tls, (n) => (n <= 3 ? 500 : 200))
    try {
      const stuck = await endpoint(hanging.port, "stuck")
      const healthy = await endpoint(flaky.port, "healthy")
      // More hanging deliveries than the instance has workers.
      for (let i = 0; i < 24; i++) {
        expect((await api.call("POST", `/v1/webhooks/${stuck}/test`)).status).toBe(202)
      }
      await new Promise((r) => setTimeout(r, 500))
      const queuedAt = Date.now()
      expect((await api.call("POST", `/v1/webhooks/${healthy}/test`)).status).toBe(202)
      await waitUntil(async () => (await attemptsOf(healthy)).some((a) => a.outcome === "succeeded"), 8_000)

      const attempts = await attemptsOf(healthy)
      expect(attempts.map((a) => a.outcome)).toEqual(["retrying", "retrying", "retrying", "succeeded"])
      expect(attempts[0]!.attempted_at.getTime() - queuedAt).toBeLessThan(1_000)
      for (let i = 1; i < attempts.length; i++) {
        const late = attempts[i]!.attempted_at.getTime() - attempts[i - 1]!.next_attempt_at!.getTime()
        expect(late).toBeLessThan(1_000)
      }
      await api.call("POST", `/v1/webhooks/${stuck}/disable`)
      await api.call("POST", `/v1/webhooks/${healthy}/disable`)
    } finally {
      await flaky.close()
    }
  }, 30_000)
})

describe("disabling an endpoint", () => {
  it("logs its last attempt as cancelled with no next attempt, sends nothing more, and refuses tests and redeliveries with 409", async () => {
    const refusing = await startReceiver(tls, () => 500)
    try {
      const id = await endpoint(refusing.port, "refusing")
      const queued = await api.call<{ event_id: string }>("POST", `/v1/webhooks/${id}/test`)
      await waitUntil(async () => (await attemptsOf(id)).length >= 2, 8_000)
      expect((await api.call("POST", `/v1/webhooks/${id}/disable`)).status).toBe(204)
      const sent = refusing.received.length
      await new Promise((r) => setTimeout(r, 1_500))
      expect(refusing.received.length).toBe(sent)

      const attempts = await attemptsOf(id)
      expect(attempts.at(-1)).toMatchObject({ outcome: "cancelled", next_attempt_at: null })
      expect(attempts.slice(0, -1).every((a) => a.outcome === "retrying")).toBe(true)
      const log = await api.call<{ deliveries: Array<{ outcome: string; next_attempt_at: string | null }> }>(
        "GET",
        `/v1/webhooks/${id}/deliveries`
      )
      expect(log.body.deliveries[0]).toMatchObject({ outcome: "cancelled", next_attempt_at: null })

      const test = await api.call<{ error: { code: string } }>("POST", `/v1/webhooks/${id}/test`)
      expect([test.status, test.body.error.code]).toEqual([409, "invalid_state"])
      const again = await api.call<{ error: { code: string } }>(
        "POST",
        `/v1/events/${queued.body.event_id}/redeliver`,
        { webhook_id: id }
      )
      expect([again.status, again.body.error.code]).toEqual([409, "invalid_state"])
    } finally {
      await refusing.close()
    }
  }, 30_000)
})
