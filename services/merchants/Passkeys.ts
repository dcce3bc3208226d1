import { randomBytes } from "node:crypto"
import { SqlClient, SqlSchema } from "@effect/sql"
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse
} from "@simplewebauthn/server"
import { Clock, Config, Data, Effect, Option, Schema } from "effect"
import { InvalidState, NotFound } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { publicBaseUrl } from "../platform/Settings"
import { orDieOnStorage } from "../platform/SqlFailure"

/**
 * Passkeys (WebAuthn) for members, through @simplewebauthn/server (infra/decisions/0060-passkeys.md). A member
 * signed in some other way registers passkeys; anyone may then sign in with one, naming no address: the passkey is
 * discoverable and names its member. Challenges live five minutes and are used once, whatever the outcome.
 */

/** How long a registration or sign-in ceremony may take, from options to answer. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000

/** The relying party: the dashboard's origin, and its hostname as the rpID. */
export interface RelyingParty {
  readonly id: string
  readonly name: string
  readonly origin: string
}

/**
 * `DASHBOARD_ORIGIN` (validated with the edge's settings), else the service's own public origin: where the dashboard
 * runs is where the browser makes and uses passkeys.
 */
export const relyingPartySettings: Config.Config<RelyingParty> = Config.all({
  dashboardOrigin: Config.option(Config.string("DASHBOARD_ORIGIN")),
  base: publicBaseUrl
}).pipe(
  Config.map(({ dashboardOrigin, base }) => {
    const origin = new URL(
      Option.getOrElse(
        Option.filter(dashboardOrigin, (o) => o.trim() !== ""),
        () => base
      )
    ).origin
    return { id: new URL(origin).hostname, name: "Deposits", origin }
  })
)

/** A stored passkey as members see it: never its key or credential id. */
export interface Passkey {
  readonly id: string
  readonly name: string
  readonly createdAt: Date
  readonly lastUsedAt: Date | null
}

/** Who a passkey signed in. */
export interface PasskeySignIn {
  readonly accountId: string
  readonly memberId: string
  readonly email: string
  readonly passkeyId: string
}

/**
 * A ceremony that did not verify. `reason` is for the sign-in record and the logs only: the caller always gets the
 * same answer, so it cannot tell an unknown passkey from a removed member or a replayed challenge.
 */
export class PasskeyNotVerified extends Data.TaggedError("PasskeyNotVerified")<{
  readonly reason:
    | "unknown_challenge"
    | "expired_challenge"
    | "unknown_credential"
    | "member_removed"
    | "user_handle_mismatch"
    | "counter_not_advanced"
    | "not_verified"
  readonly detail?: string
  /** The member the passkey belongs to, once known. */
  readonly memberId?: string
  readonly email?: string
}> {}

const Purpose = Schema.Literal("register", "sign_in")
type Purpose = typeof Purpose.Type

const PasskeyRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf)
})
const toPasskey = (row: typeof PasskeyRow.Type): Passkey => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at
})

/** The WebAuthn user handle of a member: the 16 bytes of their id, which says nothing about them. */
export const userHandleOf = (memberId: string): Uint8Array => Buffer.from(memberId.replaceAll("-", ""), "hex")

const Transports = Schema.mutable(Schema.Array(Schema.String))
/** A stored passkey with its key, as a sign-in checks it (the counter is a bigint, read as text). */
const StoredPasskey = Schema.Struct({
  id: Schema.String,
  member_id: Schema.String,
  account_id: Schema.String,
  email: Schema.String,
  removed_at: Schema.NullOr(Schema.DateFromSelf),
  public_key: Schema.Uint8ArrayFromSelf,
  counter: Schema.String,
  transports: Transports
})
const NewPasskey = Schema.Struct({
  id: Schema.String,
  member_id: Schema.String,
  credential_id: Schema.String,
  public_key: Schema.Uint8ArrayFromSelf,
  counter: Schema.Number,
  transports: Transports,
  name: Schema.String,
  created_at: Schema.DateFromSelf
})
const MemberOf = Schema.Struct({ accountId: Schema.String, memberId: Schema.String })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

// Passkeys are the member's only factor here, so the authenticator must verify the person (PIN, biometrics), and
// must keep the credential itself so that a sign-in needs no address first.
const authenticatorSelection = { residentKey: "required", userVerification: "required" } as const

/** A library that threw (malformed CBOR, a bad signature encoding …) verified nothing. */
const notVerified = (cause: unknown) =>
  new PasskeyNotVerified({
    reason: "not_verified",
    detail: cause instanceof Error ? cause.message : String(cause)
  })

export class Passkeys extends Effect.Service<Passkeys>()("deposits/Passkeys", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const rp = yield* relyingPartySettings

    const sweepChallenges = SqlSchema.void({
      Request: Schema.DateFromSelf,
      execute: (at) => sql`
        delete from webauthn_challenges
        where id in (select id from webauthn_challenges where expires_at < ${at} limit 100)`
    })
    const insertChallenge = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        member_id: Schema.NullOr(Schema.String),
        purpose: Purpose,
        challenge: Schema.String,
        created_at: Schema.DateFromSelf,
        expires_at: Schema.DateFromSelf
      }),
      execute: (row) => sql`
        insert into webauthn_challenges (id, member_id, purpose, challenge, created_at, expires_at)
        values (${row.id}, ${row.member_id}, ${row.purpose}, ${row.challenge}, ${row.created_at},
                ${row.expires_at})`
    })
    const takeChallenge = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        purpose: Purpose,
        memberId: Schema.NullOr(Schema.String),
        at: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ challenge: Schema.String, expires_at: Schema.DateFromSelf }),
      execute: ({ id, purpose, memberId, at }) => sql`
        update webauthn_challenges set used_at = ${at}
        where id = ${id} and purpose = ${purpose} and used_at is null
          and member_id is not distinct from ${memberId}
        returning challenge, expires_at`
    })
    const liveMemberEmail = SqlSchema.findOne({
      Request: MemberOf,
      Result: Schema.Struct({ email: Schema.String }),
      execute: ({ accountId, memberId }) => sql`
        select email from members
        where id = ${memberId} and account_id = ${accountId} and removed_at is null`
    })
    const credentialsOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ credential_id: Schema.String, transports: Transports }),
      execute: (memberId) => sql`select credential_id, transports from passkeys where member_id = ${memberId}`
    })
    const insertPasskey = SqlSchema.findOne({
      Request: NewPasskey,
      Result: PasskeyRow,
      execute: (row) => sql`
        insert into passkeys (id, member_id, credential_id, public_key, counter, transports, name, created_at)
        values (${row.id}, ${row.member_id}, ${row.credential_id}, ${row.public_key},
                ${row.counter}, ${row.transports}::text[], ${row.name}, ${row.created_at})
        on conflict (credential_id) do nothing
        returning id, name, created_at, last_used_at`
    })
    const passkeysOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: PasskeyRow,
      execute: (memberId) => sql`
        select id, name, created_at, last_used_at from passkeys
        where member_id = ${memberId} order by created_at desc, id desc`
    })
    const deletePasskey = SqlSchema.findOne({
      Request: Schema.Struct({ memberId: Schema.String, passkeyId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ memberId, passkeyId }) => sql`
        delete from passkeys where id = ${passkeyId} and member_id = ${memberId} returning id`
    })
    const passkeyByCredential = SqlSchema.findOne({
      Request: Schema.String,
      Result: StoredPasskey,
      execute: (credentialId) => sql`
        select p.id, p.member_id, m.account_id, m.email, m.removed_at, p.public_key, p.counter::text, p.transports
        from passkeys p join members m on m.id = p.member_id
        where p.credential_id = ${credentialId}`
    })
    const advanceCounter = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        memberId: Schema.String,
        stored: Schema.Number,
        next: Schema.Number,
        at: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, memberId, stored, next, at }) => sql`
        update passkeys set counter = ${next}, last_used_at = ${at}
        where id = ${id} and counter = ${stored}
          and exists (select 1 from members where id = ${memberId} and removed_at is null)
        returning id`
    })

    /** Stores a fresh challenge; expired ones are swept on the way, so the table stays as small as its traffic. */
    const newChallenge = (purpose: Purpose, memberId: string | null) =>
      Effect.gen(function* () {
        const at = yield* now
        const id = ids.next()
        const bytes = randomBytes(32)
        // Stored as the browser will echo it in clientDataJSON: base64url of the bytes.
        const challenge = bytes.toString("base64url")
        yield* sweepChallenges(at)
        yield* insertChallenge({
          id,
          member_id: memberId,
          purpose,
          challenge,
          created_at: at,
          expires_at: new Date(at.getTime() + CHALLENGE_TTL_MS)
        })
        return { id, challenge, bytes: bytes as Uint8Array<ArrayBuffer> }
      })

    /**
     * Marks a challenge used and answers it, or fails when it is unknown, already used, of another purpose or
     * member, or expired. One statement, so two answers racing for one challenge cannot both have it.
     */
    const useChallenge = (challengeId: string, purpose: Purpose, memberId: string | null) =>
      Effect.gen(function* () {
        const at = yield* now
        const taken = yield* takeChallenge({ id: challengeId, purpose, memberId, at })
        if (Option.isNone(taken)) return yield* new PasskeyNotVerified({ reason: "unknown_challenge" })
        if (taken.value.expires_at <= at)
          return yield* new PasskeyNotVerified({ reason: "expired_challenge" })
        return taken.value.challenge
      })

    const liveMember = (accountId: string, memberId: string) => liveMemberEmail({ accountId, memberId })

    const registrationOptions = Effect.fn("Passkeys.registrationOptions")(function* (
      accountId: string,
      memberId: string
    ) {
      const member = yield* liveMember(accountId, memberId)
      if (Option.isNone(member)) return yield* NotFound.of("member")
      const existing = yield* credentialsOf(memberId)
      const { id, bytes } = yield* newChallenge("register", memberId)
      const options: PublicKeyCredentialCreationOptionsJSON = yield* Effect.promise(() =>
        generateRegistrationOptions({
          rpName: rp.name,
          rpID: rp.id,
          userName: member.value.email,
          userDisplayName: member.value.email,
          userID: userHandleOf(memberId) as Uint8Array<ArrayBuffer>,
          challenge: bytes,
          timeout: CHALLENGE_TTL_MS,
          attestationType: "none",
          excludeCredentials: existing.map((row) => ({
            id: row.credential_id,
            transports: row.transports
          })),
          authenticatorSelection
        })
      )
      return { challengeId: id, options }
    }, orDieOnStorage)

    const register = Effect.fn("Passkeys.register")(function* (
      accountId: string,
      memberId: string,
      input: {
        readonly challengeId: string
        readonly name: string
        readonly response: RegistrationResponseJSON
      }
    ) {
      if (Option.isNone(yield* liveMember(accountId, memberId))) return yield* NotFound.of("member")
      const expectedChallenge = yield* useChallenge(input.challengeId, "register", memberId)
      const verification = yield* Effect.tryPromise({
        try: () =>
          verifyRegistrationResponse({
            response: input.response,
            expectedChallenge,
            expectedOrigin: rp.origin,
            expectedRPID: rp.id,
            requireUserVerification: true
          }),
        catch: notVerified
      })
      if (!verification.verified) return yield* new PasskeyNotVerified({ reason: "not_verified" })
      const { credential } = verification.registrationInfo
      const at = yield* now
      const row = yield* insertPasskey({
        id: ids.next(),
        member_id: memberId,
        credential_id: credential.id,
        public_key: Buffer.from(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? [],
        name: input.name,
        created_at: at
      })
      if (Option.isNone(row))
        return yield* new InvalidState({ message: "This passkey is already registered." })
      return toPasskey(row.value)
    }, orDieOnStorage)

    const list = Effect.fn("Passkeys.list")(function* (memberId: string) {
      const rows = yield* passkeysOf(memberId)
      return rows.map(toPasskey)
    }, orDieOnStorage)

    /** Removes one of the member's own passkeys; another's is not found, like one that never existed. */
    const remove = Effect.fn("Passkeys.remove")(function* (memberId: string, passkeyId: string) {
      const removed = yield* deletePasskey({ memberId, passkeyId })
      if (Option.isNone(removed)) return yield* NotFound.of("passkey")
    }, orDieOnStorage)

    const signInOptions = Effect.fn("Passkeys.signInOptions")(function* () {
      const { id, bytes } = yield* newChallenge("sign_in", null)
      const options: PublicKeyCredentialRequestOptionsJSON = yield* Effect.promise(() =>
        generateAuthenticationOptions({
          rpID: rp.id,
          challenge: bytes,
          timeout: CHALLENGE_TTL_MS,
          userVerification: "required"
        })
      )
      return { challengeId: id, options }
    }, orDieOnStorage)

    /**
     * Verifies an assertion against its challenge and the stored key, and advances the passkey's counter. The
     * counter is compared and set in one statement, so of two assertions carrying the same counter (a cloned
     * authenticator, or a race) only one signs in.
     */
    const signIn = Effect.fn("Passkeys.signIn")(function* (input: {
      readonly challengeId: string
      readonly response: AuthenticationResponseJSON
    }) {
      const expectedChallenge = yield* useChallenge(input.challengeId, "sign_in", null)
      const stored = yield* passkeyByCredential(input.response.id)
      if (Option.isNone(stored)) return yield* new PasskeyNotVerified({ reason: "unknown_credential" })
      const row = stored.value
      const whose = { memberId: row.member_id, email: row.email }
      if (row.removed_at !== null)
        return yield* new PasskeyNotVerified({ reason: "member_removed", ...whose })
      const handle = input.response.response.userHandle
      if (handle !== undefined && handle !== Buffer.from(userHandleOf(row.member_id)).toString("base64url"))
        return yield* new PasskeyNotVerified({ reason: "user_handle_mismatch", ...whose })
      const storedCounter = Number(row.counter)
      const verification = yield* Effect.tryPromise({
        try: () =>
          verifyAuthenticationResponse({
            response: input.response,
            expectedChallenge,
            expectedOrigin: rp.origin,
            expectedRPID: rp.id,
            credential: {
              id: input.response.id,
              publicKey: new Uint8Array(row.public_key),
              counter: storedCounter,
              transports: row.transports
            },
            requireUserVerification: true
          }),
        catch: (cause) => {
          const detail = notVerified(cause).detail ?? ""
          // The library refuses a counter that did not move forward: a possible clone, told apart in the record.
          const reason = /counter value/i.test(detail) ? "counter_not_advanced" : "not_verified"
          return new PasskeyNotVerified({ reason, detail, ...whose })
        }
      })
      if (!verification.verified) return yield* new PasskeyNotVerified({ reason: "not_verified", ...whose })
      const at = yield* now
      const advanced = yield* advanceCounter({
        id: row.id,
        memberId: row.member_id,
        stored: storedCounter,
        next: verification.authenticationInfo.newCounter,
        at
      })
      if (Option.isNone(advanced))
        return yield* new PasskeyNotVerified({ reason: "counter_not_advanced", ...whose })
      return {
        accountId: row.account_id,
        memberId: row.member_id,
        email: row.email,
        passkeyId: row.id
      } satisfies PasskeySignIn
    }, orDieOnStorage)

    return {
      relyingParty: rp,
      registrationOptions,
      register,
      list,
      remove,
      signInOptions,
      signIn
    } as const
  }),
  dependencies: [Ids.Default]
}) {}
