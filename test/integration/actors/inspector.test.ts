import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { WebSocketServer } from "ws"
import { ActorHost } from "../../../services/actors/ActorHost"
import { Sandbox, sandboxLayer } from "../../support/Sandbox"

type Inspection = {
  type: string
  sessionId?: string
  event?: { type: string }
  snapshot?: { value?: unknown }
}

/** What the service's inspector sent to the loopback WebSocket, in order of arrival. */
class Received extends Context.Tag("test/Received")<Received, ReadonlyArray<Inspection>>() {}

/** A WebSocket server on loopback that keeps every inspection it receives, and the service inspecting to it. */
const InspectedSandbox = Layer.unwrapScoped(
  Effect.gen(function* () {
    const received: Array<Inspection> = []
    const wss = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 })
        await new Promise<void>((resolve) => wss.once("listening", () => resolve()))
        return wss
      }),
      (wss) => Effect.sync(() => wss.close())
    )
    wss.on("connection", (socket) =>
      socket.on("message", (data) => {
        const parsed = JSON.parse(data.toString()) as Inspection | Array<Inspection>
        received.push(...(Array.isArray(parsed) ? parsed : [parsed]))
      })
    )
    const port = (wss.address() as { port: number }).port
    return Layer.merge(
      Layer.succeed(Received, received),
      sandboxLayer(() => ({ config: { inspectUrl: Option.some(`ws://127.0.0.1:${port}`) } }))
    )
  })
)

// The live clock: the test waits real time for the inspections to arrive.
layer(InspectedSandbox, { timeout: 120_000, excludeTestServices: true })(
  "the Stately inspector stream",
  (it) => {
    it.effect("receives the actor, its events and snapshots of a real request on a loopback WebSocket", () =>
      Effect.gen(function* () {
        const { service, api } = yield* Sandbox
        const received = yield* Received
        const refs = yield* Effect.promise(() => api.setup())
        const created = yield* Effect.promise(() =>
          api.call<{ id: string }>(
            "POST",
            "/v1/deposit-requests",
            { amount: "5.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
            { "idempotency-key": randomUUID() }
          )
        )
        assert.strictEqual(created.status, 201)
        const uuid = created.body.id.slice(3)
        yield* Effect.flatMap(ActorHost, (host) =>
          host.apply(uuid, "inspect-attest", {
            type: "payer.wallet_attested",
            at: new Date().toISOString(),
            wallet: "0x1111111111111111111111111111111111111111",
            address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
          })
        ).pipe(Effect.provide(service.runtime))
        const deadline = Date.now() + 10_000
        const mine = () => received.filter((m) => JSON.stringify(m).includes(created.body.id))
        while (Date.now() < deadline && !mine().some((m) => m.type === "@xstate.snapshot"))
          yield* Effect.sleep("50 millis")
        const types = mine().map((m) => m.type)
        assert.include(types, "@xstate.actor")
        assert.include(types, "@xstate.event")
        assert.include(types, "@xstate.snapshot")
        const snapshot = mine().find((m) => m.type === "@xstate.snapshot")
        assert.include(JSON.stringify(snapshot), "ready")
      })
    )
  }
)
