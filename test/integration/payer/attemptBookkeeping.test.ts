import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Either, Exit, Layer } from "effect"
import {
  dropOnFailure,
  MAX_MAILBOX_SENDS,
  MAX_REFUSED_ATTEMPTS,
  settleAround,
  VerificationAttempts
} from "../../../services/payer/VerificationAttempts"
import { actorHostLayer } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"

// The attempt bookkeeping alone, on a real database: take, refuse, accept, drop, and the limits that count them.

class Fixture extends Context.Tag("test/Fixture")<Fixture, { readonly accountId: string }>() {}

const AttemptsLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (d) => Effect.promise(d.drop))
    const accountId = (yield* Effect.promise(() => createMerchant(db.url))).accountId.slice("acct_".length)
    return Layer.mergeAll(VerificationAttempts.Default, Layer.succeed(Fixture, { accountId })).pipe(
      Layer.provideMerge(actorHostLayer(db.url))
    )
  })
)

const seed = Effect.flatMap(Fixture, ({ accountId }) => seedDepositRequest(accountId))

const attemptsOf = (uuid: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{
      id: string
      kind: string
      outcome: string
      reason: string | null
      proof_digest: Uint8Array | null
    }>`
      select id, kind, outcome, reason, proof_digest from verification_attempts
      where deposit_request_id = ${uuid} order by id`
  )

layer(AttemptsLive, { timeout: 60_000 })("verification attempt bookkeeping", (it) => {
  it.effect("takes a proof's slot as refused while it is checked, then refuses, accepts or drops it", () =>
    Effect.gen(function* () {
      const attempts = yield* VerificationAttempts
      const uuid = yield* seed
      const refused = yield* attempts.take(uuid, "mailbox_code")
      const taken = yield* attemptsOf(uuid)
      assert.deepStrictEqual(
        taken.map((a) => [a.id, a.kind, a.outcome, a.reason]),
        [[refused, "mailbox_code", "refused", "being checked"]]
      )
      yield* attempts.refuse(refused, "wrong code")
      const accepted = yield* attempts.take(uuid, "wallet", "0x1111111111111111111111111111111111111111")
      yield* attempts.accept(accepted, Buffer.from("ab", "hex"))
      const dropped = yield* attempts.take(uuid, "merchant_session")
      yield* attempts.drop(dropped)
      const after = yield* attemptsOf(uuid)
      assert.deepStrictEqual(
        after.map((a) => [a.id, a.outcome, a.reason]),
        [
          [refused, "refused", "wrong code"],
          [accepted, "accepted", null]
        ]
      )
      assert.strictEqual(Buffer.from(after[1]!.proof_digest!).toString("hex"), "ab")
    })
  )

  it.effect("answers 429 once the refused proofs reach the limit, and counts sends apart", () =>
    Effect.gen(function* () {
      const attempts = yield* VerificationAttempts
      const uuid = yield* seed
      for (let i = 0; i < MAX_REFUSED_ATTEMPTS; i++) yield* attempts.take(uuid, "mailbox_code")
      const over = yield* Effect.either(attempts.take(uuid, "wallet"))
      assert.isTrue(Either.isLeft(over))
      if (Either.isLeft(over)) {
        assert.strictEqual(over.left._tag, "RateLimited")
        assert.strictEqual(over.left.message, "Too many refused proofs for this deposit request.")
      }
      // A send is final at once (accepted) and has its own limit.
      for (let i = 0; i < MAX_MAILBOX_SENDS; i++) yield* attempts.take(uuid, "mailbox_send")
      const sends = (yield* attemptsOf(uuid)).filter((a) => a.kind === "mailbox_send")
      assert.deepStrictEqual(
        sends.map((a) => [a.outcome, a.reason]),
        Array.from({ length: MAX_MAILBOX_SENDS }, () => ["accepted", null])
      )
      const tooMany = yield* Effect.either(attempts.take(uuid, "mailbox_send"))
      assert.isTrue(Either.isLeft(tooMany))
      if (Either.isLeft(tooMany))
        assert.strictEqual(tooMany.left.message, "Too many codes were sent for this deposit request.")
    })
  )

  it.effect(
    "drops the attempt when the step fails or is a duplicate, and keeps it when the step applied",
    () =>
      Effect.gen(function* () {
        const attempts = yield* VerificationAttempts
        const uuid = yield* seed
        const failing = yield* attempts.take(uuid, "merchant_session")
        const failed = yield* Effect.exit(Effect.fail("node down").pipe(dropOnFailure(attempts, failing)))
        assert.isTrue(Exit.isFailure(failed))
        const duplicate = yield* attempts.take(uuid, "merchant_session")
        yield* Effect.succeed({ _tag: "Duplicate" } as const).pipe(settleAround(attempts, duplicate))
        const stepFailed = yield* attempts.take(uuid, "merchant_session")
        yield* Effect.exit(Effect.fail("lost race").pipe(settleAround(attempts, stepFailed)))
        const applied = yield* attempts.take(uuid, "merchant_session")
        yield* Effect.succeed({ _tag: "Applied" } as const).pipe(
          Effect.tap(() => attempts.accept(applied, null)),
          settleAround(attempts, applied)
        )
        const left = yield* attemptsOf(uuid)
        assert.deepStrictEqual(
          left.map((a) => [a.id, a.outcome]),
          [[applied, "accepted"]]
        )
      })
  )
})
