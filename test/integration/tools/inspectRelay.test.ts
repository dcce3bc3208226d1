import { createWebSocketInspector } from "@statelyai/inspect"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebSocket } from "ws"
import { createMachine } from "xstate"
import { depositRequestMachine } from "../../../machines/DepositRequest"
import { Inspector } from "../../../services/actors/StepInspector"
import { type Relay, startRelay } from "../../../src/tools/InspectRelay"

/**
 * `npm run inspect`'s relay, read as Stately's inspector page reads it: whatever the service sent, and whenever the
 * page joined, the first message it gets for an actor is that actor with the machine's definition, which
 * `createMachine` takes back as the same machine (what Stately's inspector draws from).
 */
let relay: Relay

beforeAll(async () => {
  relay = await startRelay({ port: 0 })
})
afterAll(() => relay?.close())

type Message = { type: string; sessionId?: string; definition?: string; snapshot?: unknown }

/** A page on the relay: every message it is sent, in order. */
const page = async () => {
  const socket = new WebSocket(`ws://127.0.0.1:${relay.port}`)
  const got: Array<Message> = []
  socket.on("message", (data) => got.push(JSON.parse(data.toString()) as Message))
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject))
  return { got, close: () => socket.close() }
}

const until = async (check: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** The definition draws the machine: same states, same events out of each. */
const expectTheMachine = (definition: string | undefined) => {
  expect(typeof definition).toBe("string")
  const drawn = createMachine(JSON.parse(definition ?? "{}"))
  expect(drawn.id).toBe(depositRequestMachine.id)
  expect(Object.keys(drawn.root.states).sort()).toEqual(Object.keys(depositRequestMachine.root.states).sort())
  for (const [key, state] of Object.entries(depositRequestMachine.root.states))
    expect([...(drawn.root.states[key]?.transitions.keys() ?? [])].sort()).toEqual(
      [...state.transitions.keys()].sort()
    )
}

describe("the Stately inspector relay", () => {
  it("sends the service's actor with its definition first, to a page there before and one that joins late", async () => {
    const early = await page()
    const runtime = ManagedRuntime.make(Inspector.webSocket(`ws://127.0.0.1:${relay.port}`))
    const inspector = await runtime.runPromise(Effect.map(Inspector, (i) => i))
    // A request restored from the database: stepped without ever being created in this process.
    const snapshot = { status: "active", value: "ready", context: { id: "dr_restored" } }
    inspector.stepped("dr_restored", { type: "payer.verified" }, snapshot)
    inspector.stepped("dr_restored", { type: "deadline.reached" }, { ...snapshot, value: "expired" })
    const mine = (got: Array<Message>) => got.filter((m) => m.sessionId === "dr_restored")
    await until(() => mine(early.got).length >= 5, "five messages of the restored actor")
    expect(mine(early.got)[0]?.type).toBe("@xstate.actor")
    expectTheMachine(mine(early.got)[0]?.definition)
    // Announced by the service itself, with the snapshot it restored (the relay's own announcement has none here).
    expect(mine(early.got)[0]?.snapshot).toMatchObject({ value: "ready" })
    expect(mine(early.got).map((m) => m.type)).toEqual([
      "@xstate.actor",
      "@xstate.event",
      "@xstate.snapshot",
      "@xstate.event",
      "@xstate.snapshot"
    ])
    const late = await page()
    await until(() => late.got.length >= 5, "the replay")
    expect(late.got[0]?.type).toBe("@xstate.actor")
    expectTheMachine(late.got[0]?.definition)
    early.close()
    late.close()
    await runtime.dispose()
  })

  it("announces, with the definition, an actor a service only stepped (an older build, or the relay restarted)", async () => {
    const watching = await page()
    // The library itself, as a service that never sent the actor.
    const service = createWebSocketInspector({ url: `ws://127.0.0.1:${relay.port}`, autoStart: true })
    service.event("dr_unannounced", { type: "payer.verified" })
    service.snapshot("dr_unannounced", { status: "active", value: "ready", context: {} } as never, {
      event: { type: "payer.verified" }
    })
    const mine = () => watching.got.filter((m) => m.sessionId === "dr_unannounced")
    await until(() => mine().length >= 3, "the actor, the event and the snapshot")
    expect(mine().map((m) => m.type)).toEqual(["@xstate.actor", "@xstate.event", "@xstate.snapshot"])
    expectTheMachine(mine()[0]?.definition)
    service.stop()
    watching.close()
  })
})
