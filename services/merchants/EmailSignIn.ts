import { SqlClient, SqlSchema } from "@effect/sql"
import { randomInt } from "node:crypto"
import { Clock, Effect, Option, Schema } from "effect"
import { InvalidRequest } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { Mailer } from "../platform/Mailer"
import { digestOf, newSecret, sameDigest } from "../platform/Secrets"
import { Accounts } from "./Accounts"
import { maskEmail } from "./MemberSettings"
import type { MemberRows, SignInClient } from "./MemberRows"
import { type SignInAttempt, SignInAttempts, SignInKind } from "./SignInAttempts"
import { orDieOnStorage } from "./StorageFailure"

/** How long a mailed sign-in code (and its link) lives. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60 * 1000

const LINK_PREFIX = "signin_"

const refusedCode = new InvalidRequest({
  message: "The code is wrong, already used or expired.",
  param: "code"
})
const refusedLink = new InvalidRequest({
  message: "The code is wrong, already used or expired.",
  param: "token"
})

const codeDigest = (id: string, code: string) => digestOf(`${id}:${code}`)

const SignInCode = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  code_digest: Schema.Uint8ArrayFromSelf,
  link_digest: Schema.Uint8ArrayFromSelf,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})
const EmailAt = Schema.Struct({ email: Schema.String, at: Schema.DateFromSelf })

/**
 * Sign-in by a mailed code or link, and sign-up when it is on (`Members.startEmail`, `verifyCode`, `verifyLink`).
 * Codes and link tokens are stored as SHA-256 digests; the link's token travels only in its fragment.
 */
export const makeEmailSignIn = (options: {
  readonly rows: MemberRows
  readonly signUp: boolean
  readonly link: (fragment: string) => string
}) =>
  Effect.gen(function* () {
    const { rows, signUp, link } = options
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const mailer = yield* Mailer
    const accounts = yield* Accounts
    const attempts = yield* SignInAttempts
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const insertCode = SqlSchema.void({
      Request: SignInCode,
      execute: (row) => sql`
        insert into sign_in_codes (id, email, code_digest, link_digest, created_at, expires_at)
        values (${row.id}, ${row.email}, ${row.code_digest}, ${row.link_digest}, ${row.created_at},
                ${row.expires_at})`
    })
    const liveCodes = SqlSchema.findAll({
      Request: EmailAt,
      Result: SignInCode.pipe(Schema.pick("id", "code_digest")),
      execute: ({ email, at }) => sql`
        select id, code_digest from sign_in_codes
        where email = ${email} and used_at is null and expires_at > ${at}
        order by created_at desc limit 20`
    })
    const useCode = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, at }) =>
        sql`update sign_in_codes set used_at = ${at} where id = ${id} and used_at is null returning id`
    })
    const useLink = SqlSchema.findOne({
      Request: Schema.Struct({ digest: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ email: Schema.String }),
      execute: ({ digest, at }) => sql`
        update sign_in_codes set used_at = ${at}
        where link_digest = ${digest} and used_at is null and expires_at > ${at}
        returning email`
    })
    const markSignUp = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, kind: SignInKind }),
      execute: ({ id, kind }) => sql`update sign_in_attempts set kind = ${kind} where id = ${id}`
    })

    /**
     * Mails a six-digit code and a link to the address when it is a live member's, or when sign-up is on. The
     * answer is the same either way, and it does not wait for the relay: neither its content nor its timing tells
     * a member's address from another. A failing relay is logged (the code is then lost; asking again sends another).
     */
    const startEmail = Effect.fn("Members.startEmail")(function* (rawEmail: string, who: SignInClient) {
      const email = rawEmail.toLowerCase()
      const attempt = yield* attempts.take("email_send", { email, client: who.client })
      const at = yield* now
      const expiresAt = new Date(at.getTime() + SIGN_IN_CODE_TTL_MS)
      const member = yield* rows.liveMemberByEmail(email)
      if (Option.isNone(member) && !signUp) {
        yield* attempts.settle(attempt, { refused: "no member with this address" })
      } else {
        const id = ids.next()
        const code = randomInt(0, 1_000_000).toString().padStart(6, "0")
        const token = newSecret(LINK_PREFIX)
        yield* insertCode({
          id,
          email,
          code_digest: codeDigest(id, code),
          link_digest: digestOf(token),
          created_at: at,
          expires_at: expiresAt
        })
        yield* attempts.settle(attempt, "sent", {
          memberId: Option.match(member, { onNone: () => null, onSome: (m) => m.id })
        })
        yield* mailer
          .send({
            to: email,
            subject: `Your Deposits sign-in code: ${code}`,
            text: [
              `Your sign-in code is ${code}. It expires in 10 minutes.`,
              "",
              `Or open this link to sign in: ${link(`sign-in=${token}`)}`,
              "",
              "If you did not ask for it, ignore this message."
            ].join("\n")
          })
          .pipe(
            Effect.catchAll((error) =>
              Effect.logWarning(`sign-in mail to ${maskEmail(email)} failed`, error)
            ),
            Effect.forkDaemon
          )
      }
      return { sentTo: maskEmail(email), expiresAt }
    }, orDieOnStorage)

    /**
     * Signs the address in once its code or link checked out: its live member, or (sign-up on) a new account named
     * after the address's domain with the address as its first member.
     */
    const signInAddress = (
      email: string,
      attempt: SignInAttempt,
      who: SignInClient,
      refusal: InvalidRequest
    ) =>
      Effect.gen(function* () {
        const member = yield* rows.liveMemberByEmail(email)
        if (Option.isSome(member)) {
          yield* attempts.settle(attempt, "signed_in", { memberId: member.value.id, email })
          return yield* rows.sessionFor(member.value, who)
        }
        if (!signUp) {
          // Only possible for a member removed after the code was mailed.
          yield* attempts.settle(attempt, { refused: "no member with this address" }, { email })
          return yield* refusal
        }
        const created = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const account = yield* accounts.create(email.split("@")[1] ?? email)
              const inserted = yield* rows.insertLive({
                id: ids.next(),
                account_id: account.id,
                email,
                created_at: yield* now,
                invited_by: null
              })
              // Another sign-up of the same address won the race: this transaction (and its account) rolls back.
              if (Option.isNone(inserted)) return yield* Effect.fail("taken" as const)
              return inserted.value.id
            })
          )
          .pipe(
            Effect.map(Option.some),
            Effect.catchIf(
              (e) => e === "taken",
              () => Effect.succeed(Option.none<string>())
            )
          )
        const signedUp = yield* rows.liveMemberByEmail(email)
        if (Option.isNone(signedUp)) return yield* Effect.die(new Error("a member vanished at sign-up"))
        yield* attempts.settle(attempt, "signed_in", { memberId: signedUp.value.id, email })
        if (Option.isSome(created)) yield* markSignUp({ id: attempt.id, kind: "sign_up" })
        return yield* rows.sessionFor(signedUp.value, who)
      })

    /** The address's code, once: compared by digest against each live code of the address. */
    const verifyCode = Effect.fn("Members.verifyCode")(function* (
      rawEmail: string,
      code: string,
      who: SignInClient
    ) {
      const email = rawEmail.toLowerCase()
      const attempt = yield* attempts.take("email_code", { email, client: who.client })
      const at = yield* now
      const live = yield* liveCodes({ email, at })
      const match = live.find((row) => sameDigest(row.code_digest, codeDigest(row.id, code)))
      const used = match === undefined ? Option.none() : yield* useCode({ id: match.id, at })
      if (Option.isNone(used)) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired code" })
        return yield* refusedCode
      }
      return yield* signInAddress(email, attempt, who, refusedCode)
    }, orDieOnStorage)

    /** The link's token (posted by the page from the fragment), once. */
    const verifyLink = Effect.fn("Members.verifyLink")(function* (token: string, who: SignInClient) {
      const attempt = yield* attempts.take("email_link", { client: who.client })
      const at = yield* now
      const used = yield* useLink({ digest: digestOf(token), at })
      if (Option.isNone(used)) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired link" })
        return yield* refusedLink
      }
      return yield* signInAddress(used.value.email, attempt, who, refusedLink)
    }, orDieOnStorage)

    return { startEmail, verifyCode, verifyLink } as const
  })
