import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { RateLimited } from "../domain/Errors"
import { Ids } from "../platform/Ids"

/** Refused proofs a request tolerates before answering 429. */
export const MAX_REFUSED_ATTEMPTS = 5
/** Codes a request may have mailed. */
export const MAX_MAILBOX_SENDS = 5

export type AttemptKind = "merchant_session" | "wallet" | "mailbox_code" | "mailbox_send"

/**
 * The bookkeeping of a request's verification attempts, written once for every proof: an attempt is taken before
 * the check runs, then refused (counts against the request), accepted (with the step that uses it), or dropped
 * (ended through no fault of the payer, so it counts for nothing).
 */
export class VerificationAttempts extends Effect.Service<VerificationAttempts>()(
  "deposits/VerificationAttempts",
  {
    effect: Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      const ids = yield* Ids
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

      /**
       * Takes one of the request's attempts before the check runs: under the request's row lock, counts and records
       * in one transaction, so concurrent guesses cannot pass the limit between a count and a record. A proof's slot
       * is recorded as refused ("being checked") and turned into its outcome after the check; a send's is final at once.
       */
      const take = Effect.fn("VerificationAttempts.take")(function* (
        uuid: string,
        kind: AttemptKind,
        wallet: string | null = null
      ) {
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`select 1 from deposit_requests where id = ${uuid} for update`
            const sending = kind === "mailbox_send"
            const rows = sending
              ? yield* sql<{ n: string }>`
                select count(*)::text as n from verification_attempts
                where deposit_request_id = ${uuid} and kind = 'mailbox_send'`
              : yield* sql<{ n: string }>`
                select count(*)::text as n from verification_attempts
                where deposit_request_id = ${uuid} and outcome = 'refused'`
            if (Number(rows[0]?.n ?? 0) >= (sending ? MAX_MAILBOX_SENDS : MAX_REFUSED_ATTEMPTS)) {
              return yield* new RateLimited({
                message: sending
                  ? "Too many codes were sent for this deposit request."
                  : "Too many refused proofs for this deposit request."
              })
            }
            const id = ids.next()
            yield* sql`
            insert into verification_attempts (id, deposit_request_id, kind, outcome, reason, proof_digest, wallet,
              attempted_at)
            values (${id}, ${uuid}, ${kind}, ${sending ? "accepted" : "refused"}, ${sending ? null : "being checked"},
                    null, ${wallet}, ${yield* now})`
            return id
          })
        )
      })

      /** Records why the proof was refused: the attempt counts against the request. */
      const refuse = Effect.fn("VerificationAttempts.refuse")(function* (attempt: string, reason: string) {
        yield* sql`update verification_attempts set reason = ${reason} where id = ${attempt}`
      })

      const accept = Effect.fn("VerificationAttempts.accept")(function* (
        attempt: string,
        proof: Buffer | null
      ) {
        yield* sql`
        update verification_attempts set outcome = 'accepted', reason = null, proof_digest = ${proof}
        where id = ${attempt}`
      })

      /** An attempt that ended through no fault of the payer (a node that did not answer, a lost race) counts for nothing. */
      const drop = Effect.fn("VerificationAttempts.drop")(function* (attempt: string) {
        yield* sql`delete from verification_attempts where id = ${attempt}`
      })

      return { take, refuse, accept, drop } as const
    }),
    dependencies: [Ids.Default]
  }
) {}

/** Drops the attempt when `self` fails: the failure is not the payer's. */
export const dropOnFailure =
  (attempts: VerificationAttempts, attempt: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.tapError(self, () => attempts.drop(attempt))

/**
 * Settles the attempt around the step its proof released (the step accepts it in its own transaction): a failed
 * step drops it, and so does a duplicate (the proof was applied before, so this attempt released nothing).
 */
export const settleAround =
  (attempts: VerificationAttempts, attempt: string) =>
  <A extends { readonly _tag: string }, E, R>(step: Effect.Effect<A, E, R>) =>
    step.pipe(
      dropOnFailure(attempts, attempt),
      Effect.tap((applied) => (applied._tag === "Duplicate" ? attempts.drop(attempt) : Effect.void))
    )
