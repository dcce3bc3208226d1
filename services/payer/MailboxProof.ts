import { PgClient } from "@effect/sql-pg"
import { randomInt } from "node:crypto"
import { Clock, Effect } from "effect"
import { ActorHost } from "../actors/ActorHost"
import { InvalidRequest, InvalidState, ServiceUnavailable } from "../domain/Errors"
import { formatTimestamp } from "../domain/Timestamp"
import { Ids } from "../platform/Ids"
import { Mailer } from "../platform/Mailer"
import { digestOf } from "../platform/Secrets"
import { payerStep } from "./PayerStep"
import { PayerView, proofOwed } from "./PayerView"
import { settleAround, VerificationAttempts } from "./VerificationAttempts"

/** How long a mailed code lives. */
export const MAILBOX_CODE_TTL_MS = 10 * 60 * 1000

/** `a***@example.com`: enough for the payer to recognise the mailbox, not enough to learn it. */
export const maskEmail = (email: string) => {
  const [local = "", domain = ""] = email.split("@")
  return `${local.slice(0, 1)}***@${domain}`
}

const codeDigest = (uuid: string, code: string) => digestOf(`${uuid}:${code}`)

/** The mailbox proof: a six-digit code mailed to the expected mailbox, then given back once. */
export const makeMailboxProof = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const mailer = yield* Mailer
  const payers = yield* PayerView
  const attempts = yield* VerificationAttempts
  const apply = payerStep(yield* ActorHost)
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  /** Mails a fresh six-digit code to the expected mailbox (earlier codes stay valid until they expire). */
  const start = (uuid: string) =>
    Effect.gen(function* () {
      const row = yield* payers.require(uuid)
      if (row.payer_policy_mode !== "mailbox" || !proofOwed(row).owed || row.expected_email === null) {
        return yield* new InvalidState({ message: "This deposit request does not wait for a mailbox proof." })
      }
      yield* attempts.take(uuid, "mailbox_send")
      const at = yield* now
      const code = randomInt(0, 1_000_000).toString().padStart(6, "0")
      const expiresAt = new Date(at.getTime() + MAILBOX_CODE_TTL_MS)
      yield* sql`
        insert into mailbox_codes (id, deposit_request_id, code_digest, expires_at)
        values (${ids.next()}, ${uuid}, ${codeDigest(uuid, code)}, ${expiresAt})`
      yield* mailer
        .send({
          to: row.expected_email,
          subject: `Your code for ${row.issuer_name ?? "your payment"}: ${code}`,
          text: `Your one-time code is ${code}. It expires in 10 minutes. If you did not ask for it, ignore this message.`
        })
        .pipe(
          // Counted against the sends all the same: a failing relay must not be hammered through this route.
          Effect.mapError(
            () => new ServiceUnavailable({ message: "The code could not be mailed; try again later." })
          )
        )
      return { sent_to: maskEmail(row.expected_email), expires_at: formatTimestamp(expiresAt) }
    })

  /** A live, unused code of this request, compared by digest; each code works once. */
  const verify = (uuid: string, code: string) =>
    Effect.gen(function* () {
      const row = yield* payers.require(uuid)
      if (row.payer_policy_mode !== "mailbox" || !proofOwed(row).owed) {
        return yield* new InvalidState({ message: "This deposit request does not wait for a mailbox proof." })
      }
      const attempt = yield* attempts.take(uuid, "mailbox_code")
      const at = yield* now
      const used = yield* sql<{ id: string }>`
        update mailbox_codes set used_at = ${at}
        where deposit_request_id = ${uuid} and code_digest = ${codeDigest(uuid, code)} and used_at is null and expires_at > ${at}
        returning id`
      if (used.length === 0) {
        yield* attempts.refuse(attempt, "wrong, used or expired code")
        return yield* new InvalidRequest({
          message: "The code is wrong, already used or expired.",
          param: "code"
        })
      }
      yield* apply(
        uuid,
        "verified:mailbox",
        { type: "payer.verified", at: at.toISOString(), method: "mailbox" },
        () => attempts.accept(attempt, null)
      ).pipe(settleAround(attempts, attempt))
      return yield* payers.read(uuid)
    })

  return { start, verify } as const
})
