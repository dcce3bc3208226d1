import { randomUUID } from "node:crypto"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebSocketServer } from "ws"
import { ActorHost } from "../../../services/actors/ActorHost"
import { merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

type Inspection = {
  type: string
  sessionId?: string
  event?: { type: string }
  snapshot?: { value?: unknown }
}

let wss: WebSocketServer
let service: RunningService
const received: Array<Inspection> = []

beforeAll(async () => {
  wss = new WebSocketServer({ host: "127.0.0.1", port: 0 })
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()))
  wss.on("connection", (socket) =>
    socket.on("message", (data) => {
      const parsed = JSON.parse(data.toString()) as Inspection | Array<Inspection>
      received.push(...(Array.isArray(parsed) ? parsed : [parsed]))
    })
  )
  const port = (wss.address() as { port: number }).port
  service = await startService({ config: { inspectUrl: Option.some(`ws://127.0.0.1:${port}`) } })
})
afterAll(async () => {
  await service?.stop()
  wss?.close()
})

describe("the Stately inspector stream", () => {
  it("receives the actor, its events and snapshots of a real request on a loopback WebSocket", async () => {
    const api = merchantClient(service, await createMerchant(service.databaseUrl))
    const refs = await api.setup()
    const created = await api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "5.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    expect(created.status).toBe(201)
    const uuid = created.body.id.slice(3)
    await service.runtime.runPromise(
      Effect.flatMap(ActorHost, (host) =>
        host.apply(uuid, "inspect-attest", {
          type: "payer.wallet_attested",
          at: new Date().toISOString(),
          wallet: "0x1111111111111111111111111111111111111111",
          address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
        })
      )
    )
    const deadline = Date.now() + 10_000
    const mine = () => received.filter((m) => JSON.stringify(m).includes(created.body.id))
    while (Date.now() < deadline && !mine().some((m) => m.type === "@xstate.snapshot")) {
      await new Promise((r) => setTimeout(r, 50))
    }
    const types = mine().map((m) => m.type)
    expect(types).toContain("@xstate.actor")
    expect(types).toContain("@xstate.event")
    expect(types).toContain("@xstate.snapshot")
    const snapshot = mine().find((m) => m.type === "@xstate.snapshot")
    expect(JSON.stringify(snapshot)).toContain("ready")
  })
})
