import { spawn } from "node:child_process"
import { Effect, type ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActorHost } from "../../services/ActorHost"
import { actorHostRuntime } from "../support/ActorHostRuntime"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { seedDepositRequest } from "../support/seedDepositRequest"

const WALLET = "0x1111111111111111111111111111111111111111"
let db: { url: string; drop: () => Promise<void> }
let runtime: ManagedRuntime.ManagedRuntime<ActorHost, unknown>
let accountId: string
let client: pg.Client

beforeAll(async () => {
  db = await createTestDatabase()
  runtime = actorHostRuntime(db.url) as never
  accountId = (await createMerchant(db.url)).accountId.slice(5)
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
})
afterAll(async () => {
  await client?.end()
  await runtime?.dispose()
  await db?.drop()
})

const row = async (id: string) =>
  (
    await client.query<{ status: string; version: string; received_base_units: string }>(
      "select status, version::text, received_base_units::text from deposit_requests where id = $1",
      [id]
    )
  ).rows[0]!
const count = async (sql: string, id: string) =>
  Number((await client.query<{ n: string }>(sql, [id])).rows[0]?.n ?? 0)

const credit = (i: number, amount = "1") =>
  ({
    type: "deposit.credited",
    at: new Date().toISOString(),
    credit_id: `c${i}`,
    amount_base_units: amount,
    from: WALLET
  }) as const
// Each request has its own one-time address (the column is unique).
const attestFor = (id: string) =>
  ({
    type: "payer.wallet_attested",
    at: new Date().toISOString(),
    wallet: WALLET,
    address: `0x${id.replaceAll("-", "").padEnd(40, "0")}`
  }) as const

describe("the actor host", () => {
  it("commits the step, its lifecycle events and its outbox rows together, and ignores a repeated event", async () => {
    const id = await runtime.runPromise(seedDepositRequest(accountId, "10"))
    const host = (fx: (h: ActorHost["Type"]) => Effect.Effect<unknown, unknown>) =>
      runtime.runPromise(Effect.flatMap(ActorHost, fx))
    const first = (await host((h) => h.apply(id, "evt-attest", attestFor(id)))) as { _tag: string }
    expect(first._tag).toBe("Applied")
    const again = (await host((h) => h.apply(id, "evt-attest", attestFor(id)))) as { _tag: string }
    expect(again._tag).toBe("Duplicate")
    expect(await row(id)).toMatchObject({ status: "ready", version: "2" })
    expect(await count("select count(*) n from lifecycle_events where deposit_request_id = $1", id)).toBe(1)

    await host((h) => h.apply(id, "evt-credit", credit(1, "10")))
    await host((h) => h.apply(id, "evt-credit", credit(1, "10")))
    expect(await row(id)).toMatchObject({ status: "deposited", received_base_units: "10", version: "3" })
    const outbox = await client.query<{ topic: string; payload: { amount_base_units?: string } }>(
      "select topic, payload from outbox where deposit_request_id = $1 order by id",
      [id]
    )
    expect(outbox.rows.map((r) => r.topic)).toEqual(["lifecycle", "lifecycle", "command.settle"])
    expect(outbox.rows[2]?.payload.amount_base_units).toBe("10")
    const body = (
      await client.query<{ body: string }>(
        "select body from lifecycle_events where deposit_request_id = $1 and type = 'deposit_request.deposited'",
        [id]
      )
    ).rows[0]!.body
    const parsed = JSON.parse(body) as {
      id: string
      type: string
      data: { deposit_request: Record<string, unknown> }
    }
    expect(parsed.id).toMatch(/^evt_/)
    expect(parsed.data.deposit_request.status).toBe("deposited")
    expect(parsed.data.deposit_request).not.toHaveProperty("expected_email")
  })

  it("lets one writer at a time step a request: 20 concurrent credits all count once", async () => {
    const id = await runtime.runPromise(seedDepositRequest(accountId, "1000"))
    await runtime.runPromise(Effect.flatMap(ActorHost, (h) => h.apply(id, "attest", attestFor(id))))
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runtime.runPromise(Effect.flatMap(ActorHost, (h) => h.apply(id, `credit-${i}`, credit(i, "3"))))
      )
    )
    expect(await row(id)).toMatchObject({
      status: "partially_deposited",
      received_base_units: "60",
      version: "22"
    })
  })

  it("loses nothing when the process is killed between events", async () => {
    const id = await runtime.runPromise(seedDepositRequest(accountId, "1000000"))
    await runtime.runPromise(Effect.flatMap(ActorHost, (h) => h.apply(id, "attest", attestFor(id))))
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/support/applyCreditsChild.ts", db.url, id, "400"],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    let committed = -1
    await new Promise<void>((resolve) => {
      child.stdout?.on("data", (d: Buffer) => {
        const last = d
          .toString()
          .trim()
          .split("\n")
          .at(-1)
          ?.match(/committed (\d+)/)
        if (last) committed = Number(last[1])
        if (committed >= 30 && child.exitCode === null) {
          child.kill("SIGKILL")
          resolve()
        }
      })
      child.once("exit", () => resolve())
    })
    await new Promise((r) => child.once("exit", r).emit("noop"))
    const afterKill = await row(id)
    const applied = await count("select count(*) n from applied_events where deposit_request_id = $1", id)
    // Every committed event is whole: version, received and the dedupe record agree.
    expect(BigInt(afterKill.version)).toBe(BigInt(applied) + 1n)
    expect(BigInt(afterKill.received_base_units)).toBe(BigInt(applied - 1))
    expect(applied - 1).toBeGreaterThanOrEqual(committed + 1)
    // Re-delivering every event (as a consumer would after a crash) completes the set exactly once.
    for (let i = 0; i < 400; i++) {
      await runtime.runPromise(Effect.flatMap(ActorHost, (h) => h.apply(id, `credit-${i}`, credit(i))))
    }
    expect(await row(id)).toMatchObject({ received_base_units: "400", version: "402" })
  })
})
