import { spawn } from "node:child_process"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { ActorHost } from "../../services/ActorHost"
import { actorHostLayer } from "../support/ActorHostRuntime"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { seedDepositRequest } from "../support/seedDepositRequest"

const WALLET = "0x1111111111111111111111111111111111111111"

/** The test's own database and merchant account. */
class Fixture extends Context.Tag("test/Fixture")<
  Fixture,
  { readonly databaseUrl: string; readonly accountId: string }
>() {}

const HostLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (d) => Effect.promise(d.drop))
    const accountId = (yield* Effect.promise(() => createMerchant(db.url))).accountId.slice("acct_".length)
    return Layer.merge(actorHostLayer(db.url), Layer.succeed(Fixture, { databaseUrl: db.url, accountId }))
  })
)

const row = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ status: string; version: string; received_base_units: string }>`
      select status, version::text, received_base_units::text from deposit_requests where id = ${id}`
  ).pipe(Effect.map((rows) => rows[0]!))

const count = (table: "lifecycle_events" | "applied_events", id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ n: string }>`select count(*) n from ${sql(table)} where deposit_request_id = ${id}`
  ).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0)))

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

const seed = (amount: string) =>
  Effect.flatMap(Fixture, ({ accountId }) => seedDepositRequest(accountId, amount))

layer(HostLive, { timeout: 120_000 })("the actor host", (it) => {
  it.effect(
    "commits the step, its lifecycle events and its outbox rows together, and ignores a repeated event",
    () =>
      Effect.gen(function* () {
        const host = yield* ActorHost
        const sql = yield* SqlClient.SqlClient
        const id = yield* seed("10")
        expect((yield* host.apply(id, "evt-attest", attestFor(id)))._tag).toBe("Applied")
        expect((yield* host.apply(id, "evt-attest", attestFor(id)))._tag).toBe("Duplicate")
        expect(yield* row(id)).toMatchObject({ status: "ready", version: "2" })
        expect(yield* count("lifecycle_events", id)).toBe(1)

        yield* host.apply(id, "evt-credit", credit(1, "10"))
        yield* host.apply(id, "evt-credit", credit(1, "10"))
        expect(yield* row(id)).toMatchObject({ status: "deposited", received_base_units: "10", version: "3" })
        const outbox = yield* sql<{ topic: string; payload: { amount_base_units?: string } }>`
        select topic, payload from outbox where deposit_request_id = ${id} order by id`
        expect(outbox.map((r) => r.topic)).toEqual(["lifecycle", "lifecycle", "command.settle"])
        expect(outbox[2]?.payload.amount_base_units).toBe("10")
        const [event] = yield* sql<{ body: string }>`
        select body from lifecycle_events
        where deposit_request_id = ${id} and type = 'deposit_request.deposited'`
        const parsed = JSON.parse(event!.body) as {
          id: string
          type: string
          data: { deposit_request: Record<string, unknown> }
        }
        expect(parsed.id).toMatch(/^evt_/)
        expect(parsed.data.deposit_request.status).toBe("deposited")
        expect(parsed.data.deposit_request).not.toHaveProperty("expected_email")
      })
  )

  it.effect("lets one writer at a time step a request: 20 concurrent credits all count once", () =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const id = yield* seed("1000")
      yield* host.apply(id, "attest", attestFor(id))
      yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => host.apply(id, `credit-${i}`, credit(i, "3")),
        { concurrency: "unbounded", discard: true }
      )
      expect(yield* row(id)).toMatchObject({
        status: "partially_deposited",
        received_base_units: "60",
        version: "22"
      })
    })
  )

  it.effect("loses nothing when the process is killed between events", () =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const { databaseUrl } = yield* Fixture
      const id = yield* seed("1000000")
      yield* host.apply(id, "attest", attestFor(id))
      const committed = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const child = spawn(
              process.execPath,
              ["--import", "tsx", "test/support/applyCreditsChild.ts", databaseUrl, id, "400"],
              { stdio: ["ignore", "pipe", "inherit"] }
            )
            let seen = -1
            child.stdout?.on("data", (d: Buffer) => {
              const last = d
                .toString()
                .trim()
                .split("\n")
                .at(-1)
                ?.match(/committed (\d+)/)
              if (last) seen = Number(last[1])
              if (seen >= 30 && child.exitCode === null) child.kill("SIGKILL")
            })
            child.once("exit", () => resolve(seen))
          })
      )
      const afterKill = yield* row(id)
      const applied = yield* count("applied_events", id)
      // Every committed event is whole: version, received and the dedupe record agree.
      expect(BigInt(afterKill.version)).toBe(BigInt(applied) + 1n)
      expect(BigInt(afterKill.received_base_units)).toBe(BigInt(applied - 1))
      expect(applied - 1).toBeGreaterThanOrEqual(committed + 1)
      // Re-delivering every event (as a consumer would after a crash) completes the set exactly once.
      for (let i = 0; i < 400; i++) yield* host.apply(id, `credit-${i}`, credit(i))
      expect(yield* row(id)).toMatchObject({ received_base_units: "400", version: "402" })
    })
  )
})
