import { Clock, Effect } from "effect"
import { ActorHost } from "../actors/ActorHost"
import { InvalidRequest, InvalidState } from "../domain/Errors"
import { digestOf, sameDigest } from "../platform/Secrets"
import { payerStep } from "./PayerStep"
import { PayerView, proofOwed } from "./PayerView"
import { settleAround, VerificationAttempts } from "./VerificationAttempts"

/** The merchant-session proof: the secret handed over by the merchant's page, compared by digest. */
export const makeMerchantSessionProof = Effect.gen(function* () {
  const payers = yield* PayerView
  const attempts = yield* VerificationAttempts
  const apply = payerStep(yield* ActorHost)

  return (uuid: string, secret: string) =>
    Effect.gen(function* () {
      const row = yield* payers.require(uuid)
      if (row.payer_policy_mode !== "merchant_session" || !proofOwed(row).owed) {
        return yield* new InvalidState({
          message: "This deposit request does not wait for a merchant-session proof."
        })
      }
      const attempt = yield* attempts.take(uuid, "merchant_session")
      const stored = row.merchant_session_secret_digest
      if (stored === null || !sameDigest(Buffer.from(stored), digestOf(secret))) {
        yield* attempts.refuse(attempt, "wrong secret")
        return yield* new InvalidRequest({
          message: "The secret does not match this deposit request.",
          param: "secret"
        })
      }
      const at = new Date(yield* Clock.currentTimeMillis)
      yield* apply(
        uuid,
        "verified:merchant_session",
        {
          type: "payer.verified",
          at: at.toISOString(),
          method: "merchant_session"
        },
        () => attempts.accept(attempt, null)
      ).pipe(settleAround(attempts, attempt))
      return yield* payers.read(uuid)
    })
})
