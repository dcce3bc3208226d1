import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option } from "effect"
import type { DepositRequestEvent } from "../../../machines/step"
import { ActorHost } from "../../../services/actors/ActorHost"
import type { MerchantClient } from "../../support/Api"
import { merchantClient } from "../../support/Api"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { freePort } from "../../support/Process"
import type { RunningService } from "../../support/Service"
import { newMerchantClient, onService, scopedDatabase, scopedService } from "../../support/scopedResources"

const WALLET = "0x1111111111111111111111111111111111111111"

/** The service on its own database and the machine's NATS, a merchant, and another account. */
class Fixture extends Context.Tag("test/StepsApiFixture")<
  Fixture,
  {
    readonly service: RunningService
    readonly merchant: Merchant
    readonly api: MerchantClient
    readonly other: MerchantClient
    /** The operator's port (`METRICS_PORT`). */
    readonly operatorPort: number
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const database = yield* scopedDatabase
    const operatorPort = yield* Effect.promise(freePort)
    const service = yield* scopedService({
      database,
      config: {
        natsUrl: Option.some("nats://127.0.0.1:4222"),
        rateLimitCapacity: 10_000,
        metricsPort: Option.some(operatorPort)
      }
    })
    const merchant = yield* Effect.promise(() => createMerchant(database.url))
    return {
      service,
      merchant,
      api: merchantClient(service, merchant),
      other: yield* newMerchantClient(service),
      operatorPort
    }
  })
)

interface Step {
  readonly version: number
  readonly event_id: string
  readonly event: { readonly type: string }
  readonly at: string
  readonly instance: string
  readonly status_before: string | null
  readonly status_after: string
  readonly state_before: unknown
  readonly state_after: unknown
  readonly transition: { source: string; targets: Array<string>; event: string; guard: string | null } | null
  readonly emitted: { lifecycle: Array<string>; commands: Array<string> }
  readonly snapshot_before: unknown
  readonly snapshot_after: unknown
  readonly context_changes: Array<{ path: string; change: string; before: unknown; after: unknown }>
}
interface Steps {
  readonly object: string
  readonly deposit_request_id: string
  readonly machine_version: number
  readonly retained_from_version: number | null
  readonly data: Array<Step>
}
interface FeedStep {
  readonly account_id?: string
  readonly deposit_request_id: string
  readonly version: number
  readonly event_type: string
  readonly status_before: string | null
  readonly status_after: string
  readonly at: string
  readonly instance: string
}
interface Feed {
  readonly object: string
  readonly data: Array<FeedStep>
  readonly next_cursor: string
}

const call = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))

const create = (api: MerchantClient) =>
  Effect.gen(function* () {
    const refs = yield* Effect.promise(() => api.setup())
    const made = yield* call<{ id: string }>(
      api,
      "POST",
      "/v1/deposit-requests",
      { amount: "0.000010", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    assert.strictEqual(made.status, 201)
    return made.body.id
  })

const uuidOf = (id: string) => id.slice("dr_".length)
const now = () => new Date().toISOString()
const attestFor = (id: string): DepositRequestEvent => ({
  type: "payer.wallet_attested",
  at: now(),
  wallet: WALLET,
  address: `0x${uuidOf(id).replaceAll("-", "").padEnd(40, "0")}`
})
const credit = (n: number, amount: string): DepositRequestEvent => ({
  type: "deposit.credited",
  at: now(),
  credit_id: `c${n}`,
  amount_base_units: amount,
  from: WALLET
})

/** Applies an event through the service's own actor host; answers when it committed. */
const apply = (id: string, eventId: string, event: DepositRequestEvent) =>
  Effect.gen(function* () {
    const { service } = yield* Fixture
    yield* onService(
      service,
      Effect.flatMap(ActorHost, (host) => host.apply(uuidOf(id), eventId, event)).pipe(Effect.orDie)
    )
    return Date.now()
  })

const pause = (ms: number) => Effect.promise(() => new Promise<void>((r) => setTimeout(r, ms)))

/** A GET started now in a fiber, answered with the time it arrived. */
const timed = <T>(api: MerchantClient, path: string) =>
  Effect.fork(Effect.map(call<T>(api, "GET", path), (answer) => ({ ...answer, at: Date.now() })))

layer(FixtureLive, { timeout: 120_000 })("the steps API", (it) => {
  it.effect("answers a request's history in the contract's shape, the create first", () =>
    Effect.gen(function* () {
      const { api } = yield* Fixture
      const id = yield* create(api)
      yield* apply(id, "attest", attestFor(id))
      yield* apply(id, "credit-1", credit(1, "4"))
      const answer = yield* call<Steps>(api, "GET", `/v1/deposit-requests/${id}/steps`)
      assert.strictEqual(answer.status, 200)
      const body = answer.body
      assert.strictEqual(body.object, "list")
      assert.strictEqual(body.deposit_request_id, id)
      assert.strictEqual(body.machine_version, 1)
      assert.strictEqual(body.retained_from_version, 1)
      assert.deepStrictEqual(
        body.data.map((s) => [s.version, s.event.type, s.status_before, s.status_after]),
        [
          [1, "xstate.init", null, "awaiting_payer"],
          [2, "payer.wallet_attested", "awaiting_payer", "ready"],
          [3, "deposit.credited", "ready", "partially_deposited"]
        ]
      )
      const [first, attest, part] = body.data
      assert.deepStrictEqual(Object.keys(first!).sort(), [
        "at",
        "context_changes",
        "emitted",
        "event",
        "event_id",
        "instance",
        "snapshot_after",
        "snapshot_before",
        "state_after",
        "state_before",
        "status_after",
        "status_before",
        "transition",
        "version"
      ])
      assert.isNull(first!.transition)
      assert.isNull(first!.snapshot_before)
      assert.isNull(first!.state_before)
      assert.strictEqual(first!.state_after, "awaiting_payer")
      assert.match(first!.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.isNotEmpty(first!.instance)
      assert.deepStrictEqual(attest!.transition, {
        source: "depositRequest.awaiting_payer",
        targets: ["depositRequest.ready"],
        event: "payer.wallet_attested",
        guard: "payerVerified"
      })
      assert.deepStrictEqual(attest!.snapshot_before, first!.snapshot_after)
      assert.strictEqual(part!.transition?.guard, "newCredit")
      assert.deepInclude(part!.context_changes, {
        path: "received_base_units",
        change: "changed",
        before: "0",
        after: "4"
      })
      assert.deepStrictEqual(part!.event, JSON.parse(JSON.stringify({ ...part!.event })))

      const after = yield* call<Steps>(api, "GET", `/v1/deposit-requests/${id}/steps?after_version=2`)
      assert.deepStrictEqual(
        after.body.data.map((s) => s.version),
        [3]
      )
      assert.deepStrictEqual(after.body.data[0]!.snapshot_before, attest!.snapshot_after)
    })
  )

  it.effect("holds wait_for=change until the next commit and answers it within 500 ms", () =>
    Effect.gen(function* () {
      const { api } = yield* Fixture
      const id = yield* create(api)
      yield* apply(id, "attest", attestFor(id))
      // Steps after the version asked for exist: answered at once.
      const atOnce = yield* call<Steps>(
        api,
        "GET",
        `/v1/deposit-requests/${id}/steps?after_version=1&wait_for=change&timeout=5`
      )
      assert.deepStrictEqual(
        atOnce.body.data.map((s) => s.version),
        [2]
      )
      const held = yield* timed<Steps>(
        api,
        `/v1/deposit-requests/${id}/steps?after_version=2&wait_for=change&timeout=10`
      )
      yield* pause(300)
      const committedAt = yield* apply(id, "credit-1", credit(1, "4"))
      const answer = yield* Fiber.join(held)
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(
        answer.body.data.map((s) => [s.version, s.event_id]),
        [[3, "credit-1"]]
      )
      assert.isBelow(answer.at - committedAt, 500)

      // Nothing new within the timeout: the empty answer at the timeout.
      const started = Date.now()
      const quiet = yield* call<Steps>(
        api,
        "GET",
        `/v1/deposit-requests/${id}/steps?after_version=3&wait_for=change&timeout=1`
      )
      assert.deepStrictEqual(quiet.body.data, [])
      assert.isAtLeast(Date.now() - started, 850)
    })
  )

  it.effect(
    "keeps every account to its own steps: another account's request is 404, its feed shows none",
    () =>
      Effect.gen(function* () {
        const { api, other } = yield* Fixture
        const id = yield* create(api)
        yield* apply(id, "attest", attestFor(id))
        for (const path of [`/v1/deposit-requests/${id}/steps`, `/v1/deposit-requests/${id}/steps/stately`]) {
          const refused = yield* call<{ error: { code: string } }>(other, "GET", path)
          assert.strictEqual(refused.status, 404)
          assert.strictEqual(refused.body.error.code, "deposit_request_not_found")
        }
        const feed = yield* call<Feed>(other, "GET", "/v1/lifecycle/steps?limit=200")
        assert.strictEqual(feed.status, 200)
        assert.isFalse(feed.body.data.some((s) => s.deposit_request_id === id))
        // A malformed or unknown id is the same 404.
        const unknown = yield* call<{ error: { code: string } }>(
          api,
          "GET",
          `/v1/deposit-requests/dr_${randomUUID()}/steps`
        )
        assert.strictEqual(unknown.body.error.code, "deposit_request_not_found")
        const bare = yield* call<{ error: { code: string } }>(
          api,
          "GET",
          `/v1/deposit-requests/${uuidOf(id)}/steps`
        )
        assert.strictEqual(bare.status, 404)
        // No key, no steps.
        const { service } = yield* Fixture
        const anonymous = yield* Effect.promise(() => service.request("/v1/lifecycle/steps"))
        assert.strictEqual(anonymous.status, 401)
      })
  )

  it.effect("serves the account's feed newest last, filtered by status, after a cursor, and live", () =>
    Effect.gen(function* () {
      const { api, merchant, service } = yield* Fixture
      const id = yield* create(api)
      yield* apply(id, "attest", attestFor(id))
      const latest = yield* call<Feed>(api, "GET", "/v1/lifecycle/steps?limit=2")
      assert.strictEqual(latest.body.object, "list")
      assert.deepStrictEqual(
        latest.body.data.map((s) => [
          s.deposit_request_id,
          s.version,
          s.event_type,
          s.status_before,
          s.status_after
        ]),
        [
          [id, 1, "xstate.init", null, "awaiting_payer"],
          [id, 2, "payer.wallet_attested", "awaiting_payer", "ready"]
        ]
      )
      assert.notProperty(latest.body.data[0]!, "account_id")
      const cursor = latest.body.next_cursor

      const ready = yield* call<Feed>(api, "GET", "/v1/lifecycle/steps?status=ready&limit=200")
      assert.isTrue(ready.body.data.every((s) => s.status_after === "ready"))
      assert.isTrue(ready.body.data.some((s) => s.deposit_request_id === id && s.version === 2))

      // Live: held on the cursor, woken by the next step in the account.
      const held = yield* timed<Feed>(api, `/v1/lifecycle/steps?after=${cursor}&wait_for=change&timeout=10`)
      yield* pause(300)
      const committedAt = yield* apply(id, "credit-1", credit(1, "4"))
      const answer = yield* Fiber.join(held)
      assert.deepStrictEqual(
        answer.body.data.map((s) => [s.version, s.event_type, s.status_after]),
        [[3, "deposit.credited", "partially_deposited"]]
      )
      assert.isBelow(answer.at - committedAt, 500)
      const next = yield* call<Feed>(api, "GET", `/v1/lifecycle/steps?after=${answer.body.next_cursor}`)
      assert.deepStrictEqual(next.body.data, [])
      assert.strictEqual(next.body.next_cursor, answer.body.next_cursor)

      // A dashboard session reads the same feed.
      const viaSession = yield* Effect.promise(() =>
        service.request(`/v1/lifecycle/steps?after=${cursor}`, { headers: merchant.headers("session") })
      )
      assert.strictEqual(viaSession.status, 200)
      const sessionBody = (yield* Effect.promise(() => viaSession.json())) as Feed
      assert.deepStrictEqual(sessionBody.data, answer.body.data)

      const bad = yield* call<{ error: { code: string } }>(api, "GET", "/v1/lifecycle/steps?limit=201")
      assert.strictEqual(bad.status, 400)
    })
  )

  it.effect("exports a request's history as Stately inspection events, as a download", () =>
    Effect.gen(function* () {
      const { api } = yield* Fixture
      const id = yield* create(api)
      yield* apply(id, "attest", attestFor(id))
      yield* apply(id, "credit-1", credit(1, "4"))
      const answer = yield* call<Array<Record<string, unknown>>>(
        api,
        "GET",
        `/v1/deposit-requests/${id}/steps/stately`
      )
      assert.strictEqual(answer.status, 200)
      assert.match(
        answer.headers.get("content-disposition") ?? "",
        /^attachment; filename="dr_[^"]+\.stately\.json"$/
      )
      const events = answer.body
      assert.deepStrictEqual(
        events.map((e) => e.type),
        ["@xstate.actor", "@xstate.event", "@xstate.snapshot", "@xstate.event", "@xstate.snapshot"]
      )
      const inspectVersion = (
        JSON.parse(
          readFileSync(
            new URL("../../../node_modules/@statelyai/inspect/package.json", import.meta.url),
            "utf8"
          )
        ) as { version: string }
      ).version
      // The fields every `StatelyBaseInspectionEvent` has, then each kind's own.
      for (const e of events) {
        assert.strictEqual(e.sessionId, id)
        assert.strictEqual(e.rootId, id)
        assert.isString(e.id)
        assert.match(e.createdAt as string, /^\d+$/)
        assert.strictEqual(e._version, inspectVersion)
      }
      const actor = events[0]!
      assert.strictEqual(actor.name, "depositRequest")
      const definition = JSON.parse(actor.definition as string) as {
        id: string
        states: Record<string, unknown>
      }
      assert.strictEqual(definition.id, "depositRequest")
      assert.includeMembers(Object.keys(definition.states), ["awaiting_payer", "ready", "settled"])
      assert.strictEqual((actor.snapshot as { value: string }).value, "awaiting_payer")
      const [, event, snapshot] = events
      assert.strictEqual((event!.event as { type: string }).type, "payer.wallet_attested")
      assert.strictEqual((snapshot!.event as { type: string }).type, "payer.wallet_attested")
      assert.strictEqual((snapshot!.snapshot as { value: string }).value, "ready")
      assert.strictEqual((events[4]!.snapshot as { value: string }).value, "partially_deposited")
    })
  )

  it.effect("serves every account's steps only on the operator's port, live, with the account named", () =>
    Effect.gen(function* () {
      const { api, other, operatorPort, service, merchant } = yield* Fixture
      const mine = yield* create(api)
      const theirs = yield* create(other)
      const operator = <T>(query: string) =>
        Effect.promise(async () => {
          const res = await fetch(`http://127.0.0.1:${operatorPort}/inspector/steps${query}`)
          return { status: res.status, body: (await res.json()) as T, at: Date.now() }
        })
      const all = yield* operator<Feed & { data: Array<FeedStep & { account_id: string }> }>("?limit=200")
      assert.strictEqual(all.status, 200)
      const accounts = new Map(all.body.data.map((s) => [s.deposit_request_id, s.account_id]))
      assert.strictEqual(accounts.get(mine), merchant.accountId)
      assert.match(accounts.get(theirs) ?? "", /^acct_/)
      assert.notStrictEqual(accounts.get(theirs), merchant.accountId)

      // Live across accounts: held on the cursor, woken by the next step of any account.
      const held = yield* Effect.fork(
        operator<Feed>(`?after=${all.body.next_cursor}&wait_for=change&timeout=10`)
      )
      yield* pause(300)
      const committedAt = yield* apply(theirs, "attest", attestFor(theirs))
      const answer = yield* Fiber.join(held)
      assert.deepStrictEqual(
        answer.body.data.map((s) => [s.deposit_request_id, s.version]),
        [[theirs, 2]]
      )
      assert.isBelow(answer.at - committedAt, 500)
      assert.strictEqual((yield* operator<{ error: string }>("?limit=0")).status, 400)

      // Not on the API's port, with a key or a session, under any path.
      for (const path of ["/inspector/steps", "/v1/inspector/steps", "/v1/lifecycle/steps/all"]) {
        for (const via of ["api_key", "session"] as const) {
          const refused = yield* Effect.promise(() =>
            service.request(path, { headers: merchant.headers(via) })
          )
          assert.strictEqual(refused.status, 404, `${via} ${path}`)
          yield* Effect.promise(() => refused.arrayBuffer())
        }
      }
      // The merchant's own feed never lists the other account's request.
      const own = yield* call<Feed>(api, "GET", "/v1/lifecycle/steps?limit=200")
      assert.isFalse(own.body.data.some((s) => s.deposit_request_id === theirs))
    })
  )

  it.effect("describes every steps route in /openapi.json", () =>
    Effect.gen(function* () {
      const { service } = yield* Fixture
      const document = (yield* Effect.promise(() =>
        service.request("/openapi.json").then((r) => r.json())
      )) as { paths: Record<string, Record<string, { summary?: string; description?: string }>> }
      for (const path of [
        "/v1/deposit-requests/{id}/steps",
        "/v1/deposit-requests/{id}/steps/stately",
        "/v1/lifecycle/steps"
      ]) {
        const get = document.paths[path]?.get
        assert.isDefined(get, path)
        assert.isNotEmpty(get!.summary)
        assert.isNotEmpty(get!.description)
      }
    })
  )
})
