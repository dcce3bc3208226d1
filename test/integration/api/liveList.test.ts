import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type { MerchantClient } from "../../support/Api"
import { merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import type { RunningService } from "../../support/Service"
import { DepositRequests } from "../../../services/depositRequests/DepositRequests"
import { newMerchantClient, onService, scopedDatabase, scopedService } from "../../support/scopedResources"

/** Two instances on one database, talking through the real NATS server: a poll on one, changes through the other. */
class Fixture extends Context.Tag("test/LiveListFixture")<
  Fixture,
  {
    readonly a: RunningService
    readonly b: RunningService
    /** The merchant's client on each instance. */
    readonly onA: MerchantClient
    readonly onB: MerchantClient
    /** Another account, on instance a. */
    readonly other: MerchantClient
  }
>() {}

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const database = yield* scopedDatabase
    const config = { natsUrl: Option.some("nats://127.0.0.1:4222"), rateLimitCapacity: 10_000 }
    const a = yield* scopedService({ database, config })
    const b = yield* scopedService({ database, config })
    const merchant = yield* Effect.promise(() => createMerchant(database.url))
    return {
      a,
      b,
      onA: merchantClient(a, merchant),
      onB: merchantClient(b, merchant),
      other: yield* newMerchantClient(a)
    }
  })
)

interface Row {
  readonly id: string
  readonly version: string
  readonly heading: string
}
interface Page {
  readonly deposit_requests: ReadonlyArray<Row>
  readonly next_cursor: string | null
  readonly version: string
}

const call = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))

const create = (api: MerchantClient, reference: string) =>
  Effect.gen(function* () {
    const refs = yield* Effect.promise(() => api.setup())
    const made = yield* call<{ id: string }>(
      api,
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, reference },
      { "idempotency-key": randomUUID() }
    )
    assert.strictEqual(made.status, 201)
    return made.body.id
  })

/** Starts a request now, in a fiber that answers it with when it was answered. */
const timed = <T>(api: MerchantClient, path: string) => {
  const started = Date.now()
  return Effect.map(
    Effect.fork(Effect.map(call<T>(api, "GET", path), (answer) => ({ ...answer, at: Date.now() }))),
    (fiber) => ({ started, fiber }) as const
  )
}

const pause = (ms: number) => Effect.promise(() => new Promise<void>((r) => setTimeout(r, ms)))

layer(FixtureLive, { timeout: 60_000 })("the live deposit request list", (it) => {
  it.effect("answers at once for an old version, and needs the version with wait_for=change", () =>
    Effect.gen(function* () {
      const { onA, onB } = yield* Fixture
      const reference = `live-old-${randomUUID()}`
      yield* create(onA, reference)
      const page = yield* call<Page>(onA, "GET", `/v1/deposit-requests?reference=${reference}`)
      assert.strictEqual(page.status, 200)
      assert.match(page.body.version, /^[A-Za-z0-9_-]{16}$/)
      // The same page read twice has the same version.
      const again = yield* call<Page>(onB, "GET", `/v1/deposit-requests?reference=${reference}`)
      assert.strictEqual(again.body.version, page.body.version)
      const started = Date.now()
      const old = yield* call<Page>(
        onB,
        "GET",
        `/v1/deposit-requests?reference=${reference}&wait_for=change&version=AAAAAAAAAAAAAAAA&timeout=10`
      )
      assert.strictEqual(old.status, 200)
      assert.strictEqual(old.body.version, page.body.version)
      assert.isBelow(Date.now() - started, 1000)
      const missing = yield* call<{ error: { code: string; param: string } }>(
        onB,
        "GET",
        `/v1/deposit-requests?reference=${reference}&wait_for=change`
      )
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(missing.body.error.param, "version")
    })
  )

  it.effect("wakes within a second of a change, through the other instance, to a request on the page", () =>
    Effect.gen(function* () {
      const { onA, onB } = yield* Fixture
      const reference = `live-change-${randomUUID()}`
      const older = yield* create(onA, reference)
      yield* create(onA, reference)
      const page = yield* call<Page>(onA, "GET", `/v1/deposit-requests?reference=${reference}`)
      assert.strictEqual(page.body.deposit_requests.length, 2)
      const { started, fiber } = yield* timed<Page>(
        onB,
        `/v1/deposit-requests?reference=${reference}&wait_for=change&version=${page.body.version}&timeout=20`
      )
      yield* pause(300)
      const changedAt = Date.now()
      const patch = yield* call(onA, "PATCH", `/v1/deposit-requests/${older}`, { heading: "changed" })
      assert.strictEqual(patch.status, 200)
      const answer = yield* fiber.await.pipe(Effect.flatten)
      const answeredAt = answer.at
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.headers.get("cache-control"), "no-store")
      assert.isBelow(answeredAt - changedAt, 1000)
      assert.isAtLeast(answeredAt - started, 300)
      assert.notStrictEqual(answer.body.version, page.body.version)
      const changed = answer.body.deposit_requests.find((r) => r.id === older)
      assert.strictEqual(changed?.heading, "changed")
      // The fresh page is the page as read now.
      const now = yield* call<Page>(onB, "GET", `/v1/deposit-requests?reference=${reference}`)
      assert.deepStrictEqual(answer.body, now.body)
    })
  )

  it.effect(
    "sees a change committed between a page's read and its subscription (the check after subscribing)",
    () =>
      Effect.gen(function* () {
        const { a, onA } = yield* Fixture
        const reference = `live-race-${randomUUID()}`
        const id = yield* create(onA, reference)
        const page = (yield* call<Page>(onA, "GET", `/v1/deposit-requests?reference=${reference}`)).body
        const unchanged = (rows: Page["deposit_requests"]) =>
          onService(
            a,
            Effect.flatMap(DepositRequests, (requests) => requests.pageUnchanged(rows))
          )
        assert.isTrue(yield* unchanged(page.deposit_requests))
        assert.isTrue(yield* unchanged([]))
        yield* call(onA, "PATCH", `/v1/deposit-requests/${id}`, { heading: "between" })
        assert.isFalse(yield* unchanged(page.deposit_requests))
      })
  )

  it.effect("wakes a first page within a second of a create in the account, on the other instance", () =>
    Effect.gen(function* () {
      const { onA, onB } = yield* Fixture
      yield* create(onA, `live-first-${randomUUID()}`)
      const page = yield* call<Page>(onB, "GET", "/v1/deposit-requests?limit=5")
      const { fiber } = yield* timed<Page>(
        onB,
        `/v1/deposit-requests?limit=5&wait_for=change&version=${page.body.version}&timeout=20`
      )
      yield* pause(300)
      const createdAt = Date.now()
      const created = yield* create(onA, `live-first-${randomUUID()}`)
      const answer = yield* fiber.await.pipe(Effect.flatten)
      assert.isBelow(answer.at - createdAt, 1000)
      assert.notStrictEqual(answer.body.version, page.body.version)
      assert.strictEqual(answer.body.deposit_requests[0]?.id, created)
    })
  )

  it.effect(
    "answers the unchanged page at the timeout: changes off the page and another account's creates do not wake it",
    () =>
      Effect.gen(function* () {
        const { onA, onB, other } = yield* Fixture
        const reference = `live-quiet-${randomUUID()}`
        // Older than every request on both pages below.
        const offPage = yield* create(onA, `live-elsewhere-${randomUUID()}`)
        for (let i = 0; i < 3; i++) yield* create(onA, reference)
        const page = yield* call<Page>(onA, "GET", `/v1/deposit-requests?reference=${reference}`)
        // A page of the second account: a create there must not wake the first account's first page either.
        const firstPage = yield* call<Page>(onA, "GET", "/v1/deposit-requests?limit=3")
        const quiet = yield* timed<Page>(
          onB,
          `/v1/deposit-requests?reference=${reference}&wait_for=change&version=${page.body.version}&timeout=2`
        )
        const quietFirst = yield* timed<Page>(
          onB,
          `/v1/deposit-requests?limit=3&wait_for=change&version=${firstPage.body.version}&timeout=2`
        )
        yield* pause(300)
        const patch = yield* call(onA, "PATCH", `/v1/deposit-requests/${offPage}`, {
          heading: "not on the page"
        })
        assert.strictEqual(patch.status, 200)
        yield* create(other, reference)
        for (const { started, fiber } of [quiet, quietFirst]) {
          const answer = yield* fiber.await.pipe(Effect.flatten)
          const elapsed = answer.at - started
          assert.strictEqual(answer.status, 200)
          // The hold is the timeout less up to 10% jitter.
          assert.isAtLeast(elapsed, 1750)
          assert.isBelow(elapsed, 4000)
        }
        const answered = yield* quiet.fiber.await.pipe(Effect.flatten)
        assert.strictEqual(answered.body.version, page.body.version)
        const answeredFirst = yield* quietFirst.fiber.await.pipe(Effect.flatten)
        assert.strictEqual(answeredFirst.body.version, firstPage.body.version)
      })
  )
})
