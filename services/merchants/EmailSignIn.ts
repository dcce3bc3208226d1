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
import { orDieOnStorage } from "../platform/SqlFailure"

/** How long a mailed sign-in code (and its link) lives. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60 * 1000

const LINK_PREFIX = "signin_"
const BINDING_PREFIX = "bind_"

const refusedCode = new InvalidRequest({
  message: "The code is wrong, already used or expired.",
  param: "code"
})
const refusedLink = new InvalidRequest({
  message: "The code is wrong, already used or expired.",
  param: "token"
})
const unconfirmedLink = new InvalidRequest({
  message:
    "This link was asked for in another browser: confirm the account and the address it signs in to first.",
  param: "confirmed"
})

/** What proves a code or link is completed where it should be: the asking browser's binding, or a confirmation. */
export interface SignInProof {
  /** The binding secret the start of the sign-in handed the browser that asked (`bind_…`). */
  readonly binding?: string | undefined
  /** The person saw the page naming the account, the address and who asked, and went on (links only). */
  readonly confirmed?: boolean | undefined
}

/** What the confirmation page of a link opened in another browser shows. */
export interface LinkPreview {
  readonly email: string
  /** The account the link signs in to; null when it creates one (sign-up). */
  readonly accountName: string | null
  readonly requestedAt: Date
  readonly requestedFrom: string | null
  readonly requestedUserAgent: string | null
  readonly expiresAt: Date
}

const codeDigest = (id: string, code: string) => digestOf(`${id}:${code}`)

const SignInCode = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  code_digest: Schema.Uint8ArrayFromSelf,
  link_digest: Schema.Uint8ArrayFromSelf,
  binding_digest: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  client: Schema.NullOr(Schema.String),
  user_agent: Schema.NullOr(Schema.String),
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
        insert into sign_in_codes (id, email, code_digest, link_digest, binding_digest, client, user_agent,
                                   created_at, expires_at)
        values (${row.id}, ${row.email}, ${row.code_digest}, ${row.link_digest}, ${row.binding_digest},
                ${row.client}, ${row.user_agent}, ${row.created_at}, ${row.expires_at})`
    })
    // A new code ends the address's older ones, their links with them: only the newest can complete.
    const endOlder = SqlSchema.void({
      Request: EmailAt,
      execute: ({ email, at }) =>
        sql`update sign_in_codes set used_at = ${at} where email = ${email} and used_at is null`
    })
    const newestCode = SqlSchema.findOne({
      Request: EmailAt,
      Result: SignInCode.pipe(Schema.pick("id", "code_digest", "binding_digest")),
      execute: ({ email, at }) => sql`
        select id, code_digest, binding_digest from sign_in_codes
        where email = ${email} and used_at is null and expires_at > ${at}
        order by created_at desc, id desc limit 1`
    })
    const liveLink = SqlSchema.findOne({
      Request: Schema.Struct({ digest: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf }),
      Result: SignInCode.pipe(
        Schema.pick("id", "email", "binding_digest", "client", "user_agent", "created_at", "expires_at")
      ),
      execute: ({ digest, at }) => sql`
        select id, email, binding_digest, client, user_agent, created_at, expires_at from sign_in_codes
        where link_digest = ${digest} and used_at is null and expires_at > ${at}`
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
    /** Whether the proof carries the binding of the browser the code was mailed for. */
    const boundTo = (bindingDigest: Uint8Array | null, proof: SignInProof) =>
      bindingDigest !== null &&
      proof.binding !== undefined &&
      sameDigest(bindingDigest, digestOf(proof.binding))
    const markSignUp = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, kind: SignInKind }),
      execute: ({ id, kind }) => sql`update sign_in_attempts set kind = ${kind} where id = ${id}`
    })

    /**
     * Mails a six-digit code and a link to the address when it is a live member's, or when sign-up is on, ending
     * the address's older codes. The answer is the same either way (a masked address, the expiry and a fresh
     * binding secret for the asking browser), and it does not wait for the relay: neither its content nor its
     * timing tells a member's address from another. A failing relay is logged (asking again sends another code).
     */
    const startEmail = Effect.fn("Members.startEmail")(function* (rawEmail: string, who: SignInClient) {
      const email = rawEmail.toLowerCase()
      const attempt = yield* attempts.take("email_send", { email, client: who.client })
      const at = yield* now
      const expiresAt = new Date(at.getTime() + SIGN_IN_CODE_TTL_MS)
      const binding = newSecret(BINDING_PREFIX)
      const member = yield* rows.liveMemberByEmail(email)
      if (Option.isNone(member) && !signUp) {
        yield* attempts.settle(attempt, { refused: "no member with this address" })
      } else {
        const id = ids.next()
        const code = randomInt(0, 1_000_000).toString().padStart(6, "0")
        const token = newSecret(LINK_PREFIX)
        yield* sql.withTransaction(
          Effect.gen(function* () {
            // Two requests racing for one address would each end only the codes before them.
            yield* sql`select pg_advisory_xact_lock(hashtext(${`sign_in_codes:${email}`}))`
            yield* endOlder({ email, at })
            yield* insertCode({
              id,
              email,
              code_digest: codeDigest(id, code),
              link_digest: digestOf(token),
              binding_digest: digestOf(binding),
              client: who.client,
              user_agent: who.userAgent ?? null,
              created_at: at,
              expires_at: expiresAt
            })
          })
        )
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
      return { sentTo: maskEmail(email), expiresAt, binding }
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

    /**
     * The address's newest code, once, in the browser that asked for it (its binding): a code typed anywhere else
     * is refused as a wrong one, since nobody there asked for it.
     */
    const verifyCode = Effect.fn("Members.verifyCode")(function* (
      rawEmail: string,
      code: string,
      who: SignInClient,
      proof: SignInProof
    ) {
      const email = rawEmail.toLowerCase()
      const attempt = yield* attempts.take("email_code", { email, client: who.client })
      const at = yield* now
      const newest = yield* newestCode({ email, at })
      const match = Option.filter(
        newest,
        (row) => sameDigest(row.code_digest, codeDigest(row.id, code)) && boundTo(row.binding_digest, proof)
      )
      const used = Option.isNone(match) ? Option.none() : yield* useCode({ id: match.value.id, at })
      if (Option.isNone(used)) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired code" })
        return yield* refusedCode
      }
      return yield* signInAddress(email, attempt, who, refusedCode)
    }, orDieOnStorage)

    /**
     * The link's token (posted by the page from the fragment), once: in the browser that asked for it (its
     * binding), or elsewhere once the person confirmed the page `previewLink` describes. Unconfirmed, the link
     * stays unused.
     */
    const verifyLink = Effect.fn("Members.verifyLink")(function* (
      token: string,
      who: SignInClient,
      proof: SignInProof
    ) {
      const attempt = yield* attempts.take("email_link", { client: who.client })
      const at = yield* now
      const digest = digestOf(token)
      const live = yield* liveLink({ digest, at })
      if (Option.isSome(live) && proof.confirmed !== true && !boundTo(live.value.binding_digest, proof)) {
        yield* attempts.settle(
          attempt,
          { refused: "link opened in another browser, unconfirmed" },
          {
            email: live.value.email
          }
        )
        return yield* unconfirmedLink
      }
      const used = Option.isNone(live) ? Option.none() : yield* useLink({ digest, at })
      if (Option.isNone(used)) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired link" })
        return yield* refusedLink
      }
      return yield* signInAddress(used.value.email, attempt, who, refusedLink)
    }, orDieOnStorage)

    /**
     * What a link signs in to, for the page that asks before completing a link opened in another browser: the
     * address, its account, and when, from where and by which browser it was asked for. The link stays unused.
     */
    const previewLink = Effect.fn("Members.previewLink")(function* (token: string, who: SignInClient) {
      const attempt = yield* attempts.take("email_link", { client: who.client })
      const live = yield* liveLink({ digest: digestOf(token), at: yield* now })
      if (Option.isNone(live)) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired link" })
        return yield* refusedLink
      }
      const row = live.value
      const member = yield* rows.liveMemberByEmail(row.email)
      const account = Option.isSome(member) ? yield* accounts.get(member.value.accountId) : Option.none()
      yield* attempts.settle(attempt, "previewed", { email: row.email })
      return {
        email: row.email,
        accountName: Option.match(account, { onNone: () => null, onSome: (a) => a.name }),
        requestedAt: row.created_at,
        requestedFrom: row.client,
        requestedUserAgent: row.user_agent,
        expiresAt: row.expires_at
      } satisfies LinkPreview
    }, orDieOnStorage)

    return { startEmail, verifyCode, verifyLink, previewLink } as const
  })
