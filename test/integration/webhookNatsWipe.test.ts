import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActorHost } from "../../services/ActorHost"
import { type MerchantClient, merchantClient } from "../support/Api"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../support/HttpsReceiver"
import { createMerchant } from "../support/Merchant"
import { freePort } from "../support/Process"
import { type RunningService, startService } from "../support/Service"

/**
 * Issue 7: NATS stopped mid-flow and restarted with its store wiped loses no event. Events are written with the
 * state change (outbox) and delivered from jobs in PostgreSQL; NATS only carries wake-ups, so a broker that
 * vanishes (and comes back empty) may delay a delivery, never lose or repeat one.
 */
const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

let natsPort: number
let storeDir: string
let nats: ChildProcess | undefined
let receiver: Awaited<ReturnType<typeof startReceiver>>
let service: RunningService
let api: MerchantClient

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** A private NATS server with JetStream on its own port and store, so the test can kill it and wipe its store. */
const startNats = async () => {
  nats = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(natsPort), "-sd", storeDir], {
    stdio: "ignore"
  })
  const until = Date.now() + 10_000
  while (Date.now() < until && !(await portOpen(natsPort))) await new Promise((r) => setTimeout(r, 50))
  expect(await portOpen(natsPort)).toBe(true)
}

const killNatsAndWipeStore = async () => {
  const child = nats!
  const exited = new Promise((r) => child.once("exit", r))
  child.kill("SIGKILL")
  await exited
  rmSync(storeDir, { recursive: true, force: true })
}

const waitFor = async (check: () => boolean, ms = 20_000) => {
  const until = Date.now() + ms
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  expect(check()).toBe(true)
}

beforeAll(async () => {
  natsPort = await freePort()
  storeDir = mkdtempSync(join(tmpdir(), "nats-store-"))
  await startNats()
  receiver = await startReceiver(tls, () => 200)
  const network = localReceiverNetwork(HOST, tls.ca)
  service = await startService({
    webhookNetwork: network,
    config: {
      natsUrl: Option.some(`nats://127.0.0.1:${natsPort}`),
      webhookFirstRetryMs: 200,
      rateLimitCapacity: 10_000
    }
  })
  api = merchantClient(service, await createMerchant(service.databaseUrl))
})
afterAll(async () => {
  await service?.stop()
  await receiver?.close()
  nats?.kill("SIGKILL")
  rmSync(storeDir, { recursive: true, force: true })
})

describe("NATS wiped mid-flow", () => {
  it("delivers every event exactly once when the broker dies, loses its store and comes back", async () => {
    await api.call("POST", "/v1/webhooks", { url: `https://${HOST}:${receiver.port}/hooks` })
    const refs = await api.setup()
    const ids: Array<string> = []
    for (let i = 0; i < 6; i++) {
      const created = await api.call<{ id: string }>(
        "POST",
        "/v1/deposit-requests",
        { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
        { "idempotency-key": `wipe-${Date.now()}-${i}` }
      )
      expect(created.status).toBe(201)
      ids.push(created.body.id.slice(3))
    }
    const makeReady = (uuid: string) =>
      service.runtime.runPromise(
        Effect.flatMap(ActorHost, (h) =>
          h.apply(uuid, `wipe-attest-${uuid}`, {
            type: "payer.wallet_attested",
            at: new Date().toISOString(),
            wallet: "0x1111111111111111111111111111111111111111",
            address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
          })
        )
      )
    const readyEvents = () =>
      new Set(
        receiver.received
          .filter((r) => r.headers["service-event-type"] === "deposit_request.ready")
          .map((r) => String(r.headers["service-event-id"]))
      )

    // Two changes while the broker is up: delivered as usual.
    await makeReady(ids[0]!)
    await makeReady(ids[1]!)
    await waitFor(() => readyEvents().size === 2)

    // The broker dies and its store is wiped; changes keep committing meanwhile.
    await killNatsAndWipeStore()
    await makeReady(ids[2]!)
    await makeReady(ids[3]!)
    // It comes back empty on the same address; more changes follow.
    await startNats()
    await makeReady(ids[4]!)
    await makeReady(ids[5]!)

    await waitFor(() => readyEvents().size === 6)
    // Exactly once each: no event was delivered twice (every answer was 200), and each request has its event.
    const ready = receiver.received.filter((r) => r.headers["service-event-type"] === "deposit_request.ready")
    expect(ready).toHaveLength(6)
    const about = ready.map(
      (r) => (JSON.parse(r.body.toString("utf8")) as { data: { deposit_request: { id: string } } }).data
    )
    expect(new Set(about.map((d) => d.deposit_request.id.slice(3)))).toEqual(new Set(ids))
  })
})
