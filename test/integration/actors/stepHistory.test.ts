import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, ManagedRuntime, Option, TestServices } from "effect"
import type { DepositRequestEvent } from "../../../machines/step"
import { ActorHost } from "../../../services/actors/ActorHost"
import { StepHistory } from "../../../services/depositRequests/StepHistory"
import type { AppConfigShape } from "../../../src/app/Config"
import { actorHostLayer } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { eventually } from "../../support/eventually"
import { seedDepositRequest } from "../../support/seedDepositRequest"
import { StepHistorySweeperLive } from "../../../services/depositRequests/StepHistorySweeper"
import { Lease } from "../../../services/platform/Lease"

const WALLET = "0x1111111111111111111111111111111111111111"
const NATS = { natsUrl: Option.some("nats://127.0.0.1:4222") }

class Fixture extends Context.Tag("test/StepHistoryFixture")<
  Fixture,
  { readonly databaseUrl: string; readonly accountId: string }
>() {}

/** One instance (`host-a`) over the test's own database and the machine's NATS, with the history's reads. */
const hostLayer = (databaseUrl: string, config: Partial<AppConfigShape>) =>
  StepHistory.Default.pipe(Layer.provideMerge(actorHostLayer(databaseUrl, { ...NATS, ...config })))

const HostLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (d) => Effect.promise(d.drop))
    const accountId = (yield* Effect.promise(() => createMerchant(db.url))).accountId.slice("acct_".length)
    return Layer.merge(
      hostLayer(db.url, { instanceId: Option.some("host-a") }),
      Layer.succeed(Fixture, { databaseUrl: db.url, accountId })
    )
  })
)

/** Another instance on the same database (its own actor host, memory and name), on the live clock. */
const otherInstance = (config: Partial<AppConfigShape>) =>
  Effect.gen(function* () {
    const { databaseUrl } = yield* Fixture
    const runtime = yield* Effect.acquireRelease(
      Effect.sync(() => ManagedRuntime.make(hostLayer(databaseUrl, config))),
      (r) => Effect.promise(() => r.dispose())
    )
    return <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof hostLayer>> | Fixture>) =>
      TestServices.provideLive(
        Effect.flatMap(Fixture, (fixture) =>
          Effect.promise(() => runtime.runPromise(Effect.provideService(effect, Fixture, fixture)))
        )
      )
  })

const now = () => new Date().toISOString()
const attestFor = (id: string): DepositRequestEvent => ({
  type: "payer.wallet_attested",
  at: now(),
  wallet: WALLET,
  address: `0x${id.replaceAll("-", "").padEnd(40, "0")}`
})
const credit = (n: number, amount: string): DepositRequestEvent => ({
  type: "deposit.credited",
  at: now(),
  credit_id: `c${n}`,
  amount_base_units: amount,
  from: WALLET
})
const settlement: DepositRequestEvent = {
  type: "settlement.confirmed",
  at: now(),
  tx_hash: `0x${"ab".repeat(32)}`,
  block_number: "7"
}

const seed = (amount: string) =>
  Effect.flatMap(Fixture, ({ accountId }) => seedDepositRequest(accountId, amount))

/** The row as the actor host persisted it: version → snapshot and status. */
const persisted = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ version: string; status: string; snapshot: unknown }>`
        select version::text, status, snapshot from deposit_requests where id = ${id}`,
      (rows) => rows[0]!
    )
  )

const historyOf = (id: string, after = 0) =>
  Effect.gen(function* () {
    const { accountId } = yield* Fixture
    const found = yield* (yield* StepHistory).forRequest(accountId, id, after)
    return Option.getOrThrow(found)
  })

// The real clock: the events carry real instants, and a credit seen after the request's deadline is late.
layer(HostLive, { timeout: 120_000, excludeTestServices: true })("the step history", (it) => {
  it.effect(
    "keeps every step of a request paid in parts then over, in order, each snapshot the one the host persisted",
    () =>
      Effect.gen(function* () {
        const host = yield* ActorHost
        const id = yield* seed("10")
        const rows = new Map<number, { status: string; snapshot: unknown }>()
        const capture = Effect.map(persisted(id), (r) => rows.set(Number(r.version), r))
        yield* capture
        const events: Array<[string, DepositRequestEvent]> = [
          ["attest", attestFor(id)],
          ["credit-1", credit(1, "3")],
          // The same credit again under another event id: the machine takes it as already counted.
          ["credit-1-again", credit(1, "3")],
          ["credit-2", credit(2, "9")],
          ["settled", settlement]
        ]
        for (const [eventId, event] of events) {
          assert.strictEqual((yield* host.apply(id, eventId, event))._tag, "Applied")
          yield* capture
        }

        const history = yield* historyOf(id)
        assert.strictEqual(history.retained_from_version, 1)
        assert.deepStrictEqual(
          history.data.map((s) => s.version),
          [1, 2, 3, 4, 5, 6]
        )
        for (const s of history.data) {
          assert.deepStrictEqual(s.snapshot_after, rows.get(s.version)!.snapshot, `snapshot at ${s.version}`)
          assert.strictEqual(s.status_after, rows.get(s.version)!.status)
          assert.deepStrictEqual(s.snapshot_before, rows.get(s.version - 1)?.snapshot ?? null)
          assert.strictEqual(s.instance, "host-a")
        }
        const [create, attest, part, again, full, settled] = history.data
        assert.deepStrictEqual(create!.event, { type: "xstate.init" })
        assert.isNull(create!.transition)
        assert.isNull(create!.status_before)
        assert.deepStrictEqual(
          history.data.slice(1).map((s) => [s.event_id, s.event]),
          events.map(([eventId, event]) => [eventId, JSON.parse(JSON.stringify(event))])
        )
        assert.deepStrictEqual(attest!.transition, {
          source: "depositRequest.awaiting_payer",
          targets: ["depositRequest.ready"],
          event: "payer.wallet_attested",
          guard: "payerVerified"
        })
        // The first candidate's guard fails (not enough yet), the second's passes: the one XState takes.
        assert.deepStrictEqual(part!.transition, {
          source: "depositRequest.ready",
          targets: ["depositRequest.partially_deposited"],
          event: "deposit.credited",
          guard: "newCredit"
        })
        assert.deepInclude(part!.context_changes, {
          path: "received_base_units",
          change: "changed",
          before: "0",
          after: "3"
        })
        // Ignored: a version, no transition, nothing emitted, nothing changed.
        assert.isNull(again!.transition)
        assert.deepStrictEqual(again!.emitted, { lifecycle: [], commands: [], events: [] })
        assert.deepStrictEqual(again!.context_changes, [])
        assert.deepStrictEqual(again!.snapshot_after, again!.snapshot_before)
        assert.strictEqual(full!.transition?.guard, "newCreditFundsRequest")
        assert.deepStrictEqual(full!.emitted.commands, ["settle"])
        assert.include(full!.emitted.lifecycle, "deposit_request.deposited")
        assert.strictEqual(full!.status_before, "partially_deposited")
        assert.strictEqual(full!.status_after, "deposited")
        assert.deepStrictEqual(settled!.transition?.targets, ["depositRequest.settled"])
        assert.include(settled!.emitted.commands, "return")

        // After a version: only the later steps, each still with the snapshot before it.
        const later = yield* historyOf(id, 4)
        assert.deepStrictEqual(
          later.data.map((s) => s.version),
          [5, 6]
        )
        assert.deepStrictEqual(later.data[0]!.snapshot_before, rows.get(4)!.snapshot)
      })
  )

  it.effect("records the steps of a block's many events in one commit, each with its own snapshot", () =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const id = yield* seed("100")
      yield* host.apply(id, "attest", attestFor(id))
      const applied = yield* host.applyMany([
        { depositRequestId: id, eventId: "m1", event: credit(1, "10") },
        { depositRequestId: id, eventId: "m2", event: credit(2, "20") },
        { depositRequestId: id, eventId: "m3", event: credit(3, "30") }
      ])
      assert.strictEqual(applied, 3)
      const history = yield* historyOf(id)
      assert.deepStrictEqual(
        history.data.map(
          (s) =>
            (s.snapshot_after as { context: { received_base_units: string } }).context.received_base_units
        ),
        ["0", "0", "10", "30", "60"]
      )
      assert.deepStrictEqual(history.data[4]!.snapshot_after, (yield* persisted(id)).snapshot)
      // One commit, one instant.
      assert.strictEqual(history.data[2]!.at, history.data[4]!.at)
    })
  )

  it.scoped(
    "keeps one history, ordered by version, of steps applied by two instances, across a restart",
    () =>
      Effect.gen(function* () {
        const hostA = yield* ActorHost
        const onB = yield* otherInstance({ instanceId: Option.some("host-b") })
        const id = yield* seed("100")
        yield* hostA.apply(id, "attest", attestFor(id))
        yield* onB(Effect.flatMap(ActorHost, (b) => b.apply(id, "c1", credit(1, "10"))))
        yield* hostA.apply(id, "c2", credit(2, "10"))
        yield* onB(Effect.flatMap(ActorHost, (b) => b.apply(id, "c3", credit(3, "10"))))
        const expected = [
          [1, "host-a"],
          [2, "host-a"],
          [3, "host-b"],
          [4, "host-a"],
          [5, "host-b"]
        ]
        const seen = yield* historyOf(id)
        assert.deepStrictEqual(
          seen.data.map((s) => [s.version, s.instance]),
          expected
        )
        // Each instance read the other's row when its own memory was stale: every snapshot still chains.
        for (let i = 1; i < seen.data.length; i++)
          assert.deepStrictEqual(seen.data[i]!.snapshot_before, seen.data[i - 1]!.snapshot_after)

        // A new instance on the same database (a restart): the same history, and it goes on from there.
        const onC = yield* otherInstance({ instanceId: Option.some("host-c") })
        const afterRestart = yield* onC(
          Effect.gen(function* () {
            yield* (yield* ActorHost).apply(id, "c4", credit(4, "10"))
            return yield* historyOf(id)
          })
        )
        assert.deepStrictEqual(
          afterRestart.data.map((s) => [s.version, s.instance]),
          [...expected, [6, "host-c"]]
        )
        assert.deepStrictEqual(afterRestart.data.slice(0, 5), seen.data)
      })
  )

  it.effect("sweeps steps older than the retention in bounded batches and says where history starts", () =>
    Effect.gen(function* () {
      const host = yield* ActorHost
      const sql = yield* SqlClient.SqlClient
      const history = yield* StepHistory
      const id = yield* seed("100")
      yield* host.apply(id, "attest", attestFor(id))
      yield* host.apply(id, "c1", credit(1, "10"))
      // Versions 1 and 2 committed 31 days ago; the retention is 30.
      yield* sql`
        update deposit_request_steps set at = at - interval '31 days'
        where deposit_request_id = ${id} and version <= 2`
      let deleted = 0
      for (let n = yield* history.sweep(); n > 0; n = yield* history.sweep()) deleted += n
      assert.strictEqual(deleted, 2)
      const kept = yield* historyOf(id)
      assert.strictEqual(kept.retained_from_version, 3)
      assert.deepStrictEqual(
        kept.data.map((s) => s.version),
        [3]
      )
      // The first kept step has no snapshot before it, so nothing to explain it with.
      assert.isNull(kept.data[0]!.snapshot_before)
      assert.isNull(kept.data[0]!.transition)
    })
  )

  // On the live clock: the steps are stamped with it, and the worker's instance runs on it.
  it.scoped("runs the sweep as a worker under its lease, on an instance's start", () =>
    TestServices.provideLive(
      Effect.gen(function* () {
        const host = yield* ActorHost
        const sql = yield* SqlClient.SqlClient
        const id = yield* seed("100")
        yield* host.apply(id, "attest", attestFor(id))
        yield* sql`
        update deposit_request_steps set at = at - interval '31 days'
        where deposit_request_id = ${id} and version = 1`
        const { databaseUrl } = yield* Fixture
        // Another instance starts with the sweeper among its workers; its first pass runs at once.
        const sweeper = yield* Effect.acquireRelease(
          Effect.sync(() =>
            ManagedRuntime.make(
              StepHistorySweeperLive.pipe(
                Layer.provideMerge(Lease.Default),
                Layer.provideMerge(hostLayer(databaseUrl, { instanceId: Option.some("sweeper") }))
              )
            )
          ),
          (r) => Effect.promise(() => r.dispose())
        )
        yield* Effect.promise(() => sweeper.runtime())
        const swept = yield* eventually(
          Effect.map(historyOf(id), (h) => h.retained_from_version === 2),
          10_000
        )
        assert.isTrue(swept)
      })
    )
  )

  it.scoped("writes no history with STEP_HISTORY_DAYS=0, and the step itself is unchanged", () =>
    Effect.gen(function* () {
      const off = yield* otherInstance({ instanceId: Option.some("host-off"), stepHistoryDays: 0 })
      const id = yield* off(seed("10"))
      yield* off(Effect.flatMap(ActorHost, (h) => h.apply(id, "attest", attestFor(id))))
      const row = yield* persisted(id)
      assert.strictEqual(row.version, "2")
      assert.strictEqual(row.status, "ready")
      const sql = yield* SqlClient.SqlClient
      const [count] = yield* sql<{ n: string }>`
        select count(*)::text as n from deposit_request_steps where deposit_request_id = ${id}`
      assert.strictEqual(count!.n, "0")
      const history = yield* historyOf(id)
      assert.isNull(history.retained_from_version)
      assert.deepStrictEqual(history.data, [])
    })
  )
})
