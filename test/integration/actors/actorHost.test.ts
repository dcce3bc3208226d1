import { spawn } from "node:child_process"
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Context, Data, Effect, Either, Layer, TestServices } from "effect"
import { start, step } from "../../../machines/step"
import { ActorHost } from "../../../services/actors/ActorHost"
import { actorHostLayer } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"

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

class CallerRefused extends Data.TaggedError("CallerRefused")<{}> {}

/**
 * A second instance of the service on the same database: its own actor host, with its own remembered snapshots,
 * built for the scope and on the live clock, as another process would be: yields a function that runs an effect
 * on that instance.
 */
const otherInstance = Effect.gen(function* () {
  const { databaseUrl } = yield* Fixture
  const runtime = yield* TestServices.provideLive(Layer.toRuntime(actorHostLayer(databaseUrl)))
  return <A, E>(effect: Effect.Effect<A, E, ActorHost>) =>
    TestServices.provideLive(Effect.provide(effect, runtime))
})

const seed = (amount: string) =>
  Effect.flatMap(Fixture, ({ accountId }) => seedDepositRequest(accountId, amount))

// The real clock: the events carry real instants, and a credit seen after the request's deadline is late.
layer(HostLive, { timeout: 120_000, excludeTestServices: true })("the actor host", (it) => {
  it.effect(
    "commits the step, its lifecycle events and its outbox rows together, and ignores a repeated event",
    () =>
      Effect.gen(function* () {
        const host = yield* ActorHost
        const sql = yield* SqlClient.SqlClient
        const id = yield* seed("10")
        assert.strictEqual((yield* host.apply(id, "evt-attest", attestFor(id)))._tag, "Applied")
        assert.strictEqual((yield* host.apply(id, "evt-attest", attestFor(id)))._tag, "Duplicate")
        assert.deepInclude(yield* row(id), { status: "ready", version: "2" })
        assert.strictEqual(yield* count("lifecycle_events", id), 1)

        yield* host.apply(id, "evt-credit", credit(1, "10"))
        yield* host.apply(id, "evt-credit", credit(1, "10"))
        assert.deepInclude(yield* row(id), { status: "deposited", received_base_units: "10", version: "3" })
        const outbox = yield* sql<{ topic: string; payload: { amount_base_units?: string } }>`
        select topic, payload from outbox where deposit_request_id = ${id} order by id`
        assert.deepStrictEqual(
          outbox.map((r) => r.topic),
          ["lifecycle", "lifecycle", "command.settle"]
        )
        assert.strictEqual(outbox[2]?.payload.amount_base_units, "10")
        const [event] = yield* sql<{ body: string }>`
        select body from lifecycle_events
        where deposit_request_id = ${id} and type = 'deposit_request.deposited'`
        const parsed = JSON.parse(event!.body) as {
          id: string
          type: string
          data: { deposit_request: Record<string, unknown> }
        }
        assert.match(parsed.id, /^evt_/)
        assert.strictEqual(parsed.data.deposit_request.status, "deposited")
        assert.notProperty(parsed.data.deposit_request, "expected_email")
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
      assert.deepInclude(yield* row(id), {
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
      assert.strictEqual(BigInt(afterKill.version), BigInt(applied) + 1n)
      assert.strictEqual(BigInt(afterKill.received_base_units), BigInt(applied - 1))
      assert.isAtLeast(applied - 1, committed + 1)
      // Re-delivering every event (as a consumer would after a crash) completes the set exactly once.
      for (let i = 0; i < 400; i++) yield* host.apply(id, `credit-${i}`, credit(i))
      assert.deepInclude(yield* row(id), { received_base_units: "400", version: "402" })
    })
  )
  it.effect(
    "never loses an update to a remembered snapshot: another instance's write is read, not overwritten",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const host = yield* ActorHost
          const other = yield* otherInstance
          const id = yield* seed("1000")
          // This instance steps the request last and so remembers it at version 2 …
          yield* host.apply(id, "attest", attestFor(id))
          yield* host.apply(id, "credit-a", credit(1, "5"))
          assert.deepInclude(yield* row(id), { version: "3", received_base_units: "5" })
          // … then another instance moves it on twice, and the merchant's update once (it bumps the version too).
          yield* other(
            Effect.flatMap(ActorHost, (h) =>
              Effect.zipRight(
                h.apply(id, "credit-b", credit(2, "7")),
                h.apply(id, "credit-c", credit(3, "11"))
              )
            )
          )
          yield* Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql`update deposit_requests set heading = 'changed', version = version + 1 where id = ${id}`
          )
          // The stale snapshot is refused by its version: the step is taken again from the stored row.
          const applied = yield* host.apply(id, "credit-d", credit(4, "13"))
          assert.strictEqual(applied._tag, "Applied")
          assert.strictEqual(applied._tag === "Applied" && applied.row.heading, "changed")
          assert.deepInclude(yield* row(id), { version: "7", received_base_units: "36" })
          // And the other instance, which remembers version 5, is refused the same way.
          yield* other(Effect.flatMap(ActorHost, (h) => h.apply(id, "credit-e", credit(5, "17"))))
          assert.deepInclude(yield* row(id), { version: "8", received_base_units: "53" })
          assert.strictEqual(yield* count("applied_events", id), 6)
        })
      )
  )

  it.effect("serializes two instances applying the same events to one request: each event counts once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const host = yield* ActorHost
        const other = yield* otherInstance
        const id = yield* seed("1000")
        yield* host.apply(id, "attest", attestFor(id))
        yield* other(Effect.flatMap(ActorHost, (h) => h.apply(id, "attest", attestFor(id))))
        // Both instances are handed the same 30 events at once (a redelivery racing the first delivery).
        const events = Array.from({ length: 30 }, (_, i) => i)
        yield* Effect.all(
          [
            Effect.forEach(events, (i) => host.apply(id, `credit-${i}`, credit(i, "3")), {
              concurrency: "unbounded",
              discard: true
            }),
            other(
              Effect.flatMap(ActorHost, (h) =>
                Effect.forEach(events, (i) => h.apply(id, `credit-${i}`, credit(i, "3")), {
                  concurrency: "unbounded",
                  discard: true
                })
              )
            )
          ],
          { concurrency: "unbounded" }
        )
        assert.deepInclude(yield* row(id), { received_base_units: "90", version: "32" })
        assert.strictEqual(yield* count("applied_events", id), 31)
        // A block's credits through applyMany from both instances at once: the same rule.
        const block = events.map((i) => ({
          depositRequestId: id,
          eventId: `block-${i}`,
          event: credit(100 + i, "1")
        }))
        const [mine, theirs] = yield* Effect.all(
          [host.applyMany(block), other(Effect.flatMap(ActorHost, (h) => h.applyMany(block)))],
          { concurrency: "unbounded" }
        )
        assert.strictEqual(mine + theirs, 30)
        assert.deepInclude(yield* row(id), { received_base_units: "120", version: "62" })
      })
    )
  )

  it.effect("fails only the caller whose own statements fail when concurrent applies share a commit", () =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const sql = yield* SqlClient.SqlClient
      const ids = yield* Effect.forEach(
        Array.from({ length: 16 }, () => "100"),
        seed,
        { concurrency: 4 }
      )
      const refused = ids[5]!
      const outcomes = yield* Effect.forEach(
        ids,
        (id) =>
          Effect.either(
            host.apply(id, "attest", attestFor(id), () =>
              id === refused
                ? // Writes first, then fails: the write must roll back with its own step, and only those.
                  Effect.zipRight(
                    sql`update deposit_requests set heading = 'written by the refused caller' where id = ${id}`,
                    Effect.fail(new CallerRefused())
                  )
                : Effect.asVoid(
                    sql`update deposit_requests set heading = 'written with the step' where id = ${id}`
                  )
            )
          ),
        { concurrency: "unbounded" }
      )
      for (const [i, id] of ids.entries()) {
        const outcome = outcomes[i]!
        const [stored] = yield* sql<{ heading: string; version: string }>`
          select heading, version::text from deposit_requests where id = ${id}`
        if (id === refused) {
          assert.strictEqual(Either.isLeft(outcome) && outcome.left._tag, "CallerRefused")
          assert.deepInclude(stored, { heading: "", version: "1" })
          assert.strictEqual(yield* count("applied_events", id), 0)
          assert.strictEqual(yield* count("lifecycle_events", id), 0)
        } else {
          assert.strictEqual(Either.isRight(outcome) && outcome.right._tag, "Applied")
          assert.deepInclude(stored, { heading: "written with the step", version: "2" })
          assert.strictEqual(yield* count("applied_events", id), 1)
        }
      }
      // The refused caller can try again, alone, and its event then counts once.
      assert.strictEqual((yield* host.apply(refused, "attest", attestFor(refused)))._tag, "Applied")
      assert.deepInclude(yield* row(refused), { status: "ready", version: "2" })
    })
  )
  // The host calls v3; v2 stays for the previous build during a rolling deploy (migration 0035): both hold.
  for (const fn of ["apply_actor_steps_v2", "apply_actor_steps_v3"])
    it.effect(
      `${fn} refuses, and writes nothing for, events of requests outside the call (what the dropped foreign keys checked); what it writes takes the request's account, the call's instant and the emission order`,
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { accountId, databaseUrl } = yield* Fixture
          const id = yield* seedDepositRequest(accountId)
          // Another account's request, named by the events of a call about this one.
          const stranger = yield* seedDepositRequest(
            (yield* Effect.promise(() => createMerchant(databaseUrl))).accountId.slice("acct_".length)
          )
          const [before] = yield* sql<{ version: string; status: string; snapshot: unknown }>`
          select version::text, status, snapshot from deposit_requests where id = ${id}`
          const at = "2026-11-25T12:00:00.123Z"
          // Ids of each function's own test (lifecycle event ids are unique across requests).
          const lifecycleId = `01900000-0000-7000-8000-0000000000${fn.endsWith("v2") ? "e" : "c"}e`
          const statement = (
            over: { event?: string; lifecycleRequest?: string },
            version = 1,
            n = "once"
          ) => ({
            at,
            requests: [
              {
                id,
                expected_version: String(Number(before!.version) + version - 1),
                version: String(Number(before!.version) + version),
                status: before!.status,
                snapshot: before!.snapshot,
                received_base_units: "0",
                deposit_address: null
              }
            ],
            events: [{ deposit_request_id: over.event ?? id, event_id: `checked-${n}` }],
            // The command is emitted first, then the lifecycle event: their outbox rows keep that order.
            lifecycle: [
              {
                n: 1,
                id:
                  version === 1
                    ? lifecycleId
                    : `01900000-0000-7000-8000-0000000000${fn.endsWith("v2") ? "e" : "c"}f`,
                deposit_request_id: over.lifecycleRequest ?? id,
                type: "deposit_request.checked",
                body: "{}",
                trace_parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
              }
            ],
            commands: [
              {
                n: 0,
                topic: "command.settle",
                deposit_request_id: id,
                payload: { kind: "command", type: "settle", command_id: `settle:${n}` }
              }
            ]
          })
          const run = (steps: ReturnType<typeof statement>) =>
            Effect.either(sql.unsafe(`select * from ${fn}($1::jsonb)`, [JSON.stringify(steps)]))
          const outbox = sql<{
            topic: string
            payload: unknown
            created_at: Date
            trace_parent: string | null
          }>`
          select topic, payload, created_at, trace_parent from outbox where deposit_request_id = ${id} order by id`
          for (const refused of [statement({ event: stranger }), statement({ lifecycleRequest: stranger })]) {
            const outcome = yield* run(refused)
            // foreign_key_violation, as the keys raised it
            assert.strictEqual(
              Either.isLeft(outcome) && (outcome.left.cause as { code?: string }).code,
              "23503"
            )
            assert.strictEqual((yield* row(id)).version, before!.version)
            assert.strictEqual(yield* count("applied_events", id), 0)
            assert.strictEqual(yield* count("lifecycle_events", id), 0)
            assert.strictEqual(yield* count("lifecycle_events", stranger), 0)
            assert.deepStrictEqual(yield* outbox, [])
          }
          // The same call naming only its own request writes: the check refuses only what it should.
          assert.deepStrictEqual(yield* run(statement({})), Either.right([]))
          assert.strictEqual((yield* row(id)).version, String(Number(before!.version) + 1))
          const [written] = yield* sql<{ account_id: string; dedupe: string; occurred_at: Date }>`
          select account_id, dedupe, occurred_at from lifecycle_events where deposit_request_id = ${id}`
          assert.deepStrictEqual(written, {
            account_id: accountId,
            dedupe: "deposit_request.checked",
            occurred_at: new Date(at)
          })
          const [applied] = yield* sql<{ applied_at: Date }>`
          select applied_at from applied_events where deposit_request_id = ${id}`
          assert.deepStrictEqual(applied!.applied_at, new Date(at))
          assert.deepStrictEqual(yield* outbox, [
            {
              topic: "command.settle",
              payload: { kind: "command", type: "settle", command_id: "settle:once" },
              created_at: new Date(at),
              trace_parent: null
            },
            {
              topic: "lifecycle",
              payload: { event_id: lifecycleId },
              created_at: new Date(at),
              trace_parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            }
          ])
          // A lifecycle event its request already has (the same dedupe) is not written again, nor announced.
          assert.deepStrictEqual(yield* run(statement({}, 2, "twice")), Either.right([]))
          assert.strictEqual(yield* count("lifecycle_events", id), 1)
          assert.deepStrictEqual(
            (yield* outbox).map((o) => o.topic),
            ["command.settle", "lifecycle", "command.settle"]
          )
        })
    )
  it.effect(
    "steps never change the snapshot they start from (the host keeps snapshots in memory and steps again)",
    () =>
      Effect.sync(() => {
        const deepFreeze = (value: unknown): void => {
          if (value === null || typeof value !== "object" || Object.isFrozen(value)) return
          Object.freeze(value)
          for (const inner of Object.values(value)) deepFreeze(inner)
        }
        const address = "0x2222222222222222222222222222222222222222"
        const events = [
          { type: "payer.wallet_attested", at: "2026-01-01T00:00:01Z", wallet: WALLET, address },
          { ...credit(1, "4"), at: "2026-01-01T00:00:02Z" },
          { ...credit(2, "9"), at: "2026-01-01T00:00:03Z" },
          {
            type: "attention.raised",
            at: "2026-01-01T00:00:04Z",
            code: "deep_reorg",
            message: "reorganised",
            resolution: "an operator checks the chain"
          },
          { ...credit(3, "1"), at: "2026-01-01T00:00:05Z" },
          { type: "operator.resumed", at: "2026-01-01T00:00:06Z" }
        ] as const
        let snapshot = start({
          id: "dr_frozen",
          amount_base_units: "10",
          payout_address: WALLET,
          payer_policy_mode: "none",
          expires_at: "2030-01-01T00:00:00Z",
          created_at: "2026-01-01T00:00:00Z"
        }).snapshot
        for (const event of events) {
          const before = JSON.stringify(snapshot)
          // A write to a frozen object throws in this (strict) module: any mutation of the input fails the step.
          deepFreeze(snapshot)
          const next = step(snapshot, event)
          assert.strictEqual(JSON.stringify(snapshot), before)
          // Stepping the same snapshot again gives the same step: a refused write can step again from memory.
          assert.strictEqual(JSON.stringify(step(snapshot, event).snapshot), JSON.stringify(next.snapshot))
          snapshot = next.snapshot
        }
        assert.strictEqual((snapshot as { value: string }).value, "deposited")
      })
  )
})
