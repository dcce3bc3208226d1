import { SqlClient } from "@effect/sql"
import { randomInt } from "node:crypto"
import { Clock, Config, Effect, Option } from "effect"
import { InvalidRequest, InvalidState, NotFound, ServiceUnavailable } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { orDieOnSql } from "../platform/SqlFailure"
import { Mailer } from "../platform/Mailer"
import { digestOf, newSecret, sameDigest } from "../platform/Secrets"
import { publicBaseUrl, serviceEnv } from "../platform/Settings"
import { type Account, Accounts } from "./Accounts"
import { CredentialCache } from "./CredentialCache"
import { type SignInAttempt, SignInAttempts, type SignInKind } from "./SignInAttempts"

/** How long a mailed sign-in code (and its link) lives. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60 * 1000
/** How long an invitation waits to be accepted. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000

const LINK_PREFIX = "signin_"
const INVITE_PREFIX = "invite_"

/**
 * `SIGN_UP` = on|off: whether a verified unknown address gets an account of its own. Default on in the sandbox
 * (anyone tries it), off in production (accounts come from the operator's CLI and invitations).
 */
export const signUpSetting = Config.option(Config.literal("on", "off")("SIGN_UP"))
const signUpOn = Config.all({ signUp: signUpSetting, serviceEnv }).pipe(
  Config.map(({ signUp, serviceEnv }) =>
    Option.match(signUp, { onNone: () => serviceEnv === "sandbox", onSome: (v) => v === "on" })
  )
)

/** `DASHBOARD_ORIGIN`, or the service's own origin: where the links in mails lead. */
export const dashboardOriginSetting = Config.all({
  origin: Config.option(Config.string("DASHBOARD_ORIGIN")),
  base: publicBaseUrl
}).pipe(
  Config.map(({ origin, base }) =>
    Option.getOrElse(
      Option.filter(origin, (o) => o.trim() !== ""),
      () => new URL(base).origin
    )
  )
)

/** `a***@example.com`: enough to recognise the mailbox, not enough to learn it. */
export const maskEmail = (email: string) => {
  const [local = "", domain = ""] = email.split("@")
  return `${local.slice(0, 1)}***@${domain}`
}

export interface Member {
  readonly id: string
  readonly accountId: string
  readonly email: string
  readonly createdAt: Date
  readonly passkeys: number
}

export interface Invite {
  readonly id: string
  readonly email: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly acceptedAt: Date | null
}

export interface SessionInfo {
  readonly id: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly userAgent: string | null
  readonly current: boolean
}

/** What a successful sign-in hands back: a fresh session of the member, with who they are and where. */
export interface SignedIn {
  readonly token: string
  readonly expiresAt: Date
  readonly member: Member
  readonly account: Account
}

/** The client signing in, as the sign-in limits count it. */
export interface SignInClient {
  readonly client: string
  readonly userAgent: string | undefined
}

const refusedCode = new InvalidRequest({
  message: "The code is wrong, already used or expired.",
  param: "code"
})
const refusedLink = new InvalidRequest({
  message: "The code is wrong, already used or expired.",
  param: "token"
})
const refusedInvite = new InvalidRequest({
  message: "The invitation is wrong, already used, revoked or expired.",
  param: "token"
})

type MemberRow = { id: string; account_id: string; email: string; created_at: Date; passkeys: number }
const toMember = (row: MemberRow): Member => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  createdAt: row.created_at,
  passkeys: Number(row.passkeys)
})

type InviteRow = { id: string; email: string; created_at: Date; expires_at: Date; accepted_at: Date | null }
const toInvite = (row: InviteRow): Invite => ({
  id: row.id,
  email: row.email,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  acceptedAt: row.accepted_at
})

const codeDigest = (id: string, code: string) => digestOf(`${id}:${code}`)

/**
 * The account's people (infra/decisions/0059-members-and-sign-in.md): sign-in by a mailed code or link, sign-up
 * when it is on, invitations, members and their sessions. Every secret is stored as a SHA-256 digest and mailed
 * only inside a link's fragment; every sign-in attempt goes through `SignInAttempts` (recorded and limited).
 */
export class Members extends Effect.Service<Members>()("deposits/Members", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const mailer = yield* Mailer
    const accounts = yield* Accounts
    const cache = yield* CredentialCache
    const attempts = yield* SignInAttempts
    const signUp = yield* signUpOn
    const dashboardOrigin = yield* dashboardOriginSetting
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const link = (fragment: string) => `${dashboardOrigin}/dashboard/#${fragment}`

    const memberColumns = sql`
      m.id, m.account_id, m.email, m.created_at,
      (select count(*)::int from passkeys p where p.member_id = m.id) as passkeys`

    const liveMemberByEmail = (email: string) =>
      Effect.map(
        sql<MemberRow>`select ${memberColumns} from members m where m.email = ${email} and m.removed_at is null`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toMember)
      )

    const memberOf = (accountId: string, memberId: string) =>
      Effect.map(
        sql<MemberRow>`
          select ${memberColumns} from members m
          where m.id = ${memberId} and m.account_id = ${accountId} and m.removed_at is null`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toMember)
      )

    /** A fresh session of a live member, with their account: the answer of every sign-in. */
    const sessionFor = (member: Member, who: SignInClient) =>
      Effect.gen(function* () {
        const account = yield* accounts.get(member.accountId)
        if (Option.isNone(account)) return yield* Effect.die(new Error("a member without an account"))
        const session = yield* accounts.createSession(member.accountId, {
          memberId: member.id,
          ...(who.userAgent === undefined ? {} : { userAgent: who.userAgent })
        })
        return {
          token: session.token,
          expiresAt: session.expiresAt,
          member,
          account: account.value
        } satisfies SignedIn
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
      const member = yield* liveMemberByEmail(email)
      if (Option.isNone(member) && !signUp) {
        yield* attempts.settle(attempt, { refused: "no member with this address" })
      } else {
        const id = ids.next()
        const code = randomInt(0, 1_000_000).toString().padStart(6, "0")
        const token = newSecret(LINK_PREFIX)
        yield* sql`
          insert into sign_in_codes (id, email, code_digest, link_digest, created_at, expires_at)
          values (${id}, ${email}, ${codeDigest(id, code)}, ${digestOf(token)}, ${at}, ${expiresAt})`
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
    }, orDieOnSql)

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
        const member = yield* liveMemberByEmail(email)
        if (Option.isSome(member)) {
          yield* attempts.settle(attempt, "signed_in", { memberId: member.value.id, email })
          return yield* sessionFor(member.value, who)
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
              const rows = yield* sql<{ id: string }>`
              insert into members (id, account_id, email, created_at)
              values (${ids.next()}, ${account.id}, ${email}, ${yield* now})
              on conflict (email) where removed_at is null do nothing
              returning id`
              // Another sign-up of the same address won the race: this transaction (and its account) rolls back.
              if (rows.length === 0) return yield* Effect.fail("taken" as const)
              return rows[0]!.id
            })
          )
          .pipe(
            Effect.map(Option.some),
            Effect.catchIf(
              (e) => e === "taken",
              () => Effect.succeed(Option.none<string>())
            )
          )
        const signedUp = yield* liveMemberByEmail(email)
        if (Option.isNone(signedUp)) return yield* Effect.die(new Error("a member vanished at sign-up"))
        yield* attempts.settle(attempt, "signed_in", { memberId: signedUp.value.id, email })
        if (Option.isSome(created)) {
          yield* sql`update sign_in_attempts set kind = ${"sign_up" satisfies SignInKind} where id = ${attempt.id}`
        }
        return yield* sessionFor(signedUp.value, who)
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
      const live = yield* sql<{ id: string; code_digest: Uint8Array }>`
        select id, code_digest from sign_in_codes
        where email = ${email} and used_at is null and expires_at > ${at}
        order by created_at desc limit 20`
      const match = live.find((row) => sameDigest(row.code_digest, codeDigest(row.id, code)))
      const used =
        match === undefined
          ? []
          : yield* sql`update sign_in_codes set used_at = ${at} where id = ${match.id} and used_at is null returning id`
      if (used.length === 0) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired code" })
        return yield* refusedCode
      }
      return yield* signInAddress(email, attempt, who, refusedCode)
    }, orDieOnSql)

    /** The link's token (posted by the page from the fragment), once. */
    const verifyLink = Effect.fn("Members.verifyLink")(function* (token: string, who: SignInClient) {
      const attempt = yield* attempts.take("email_link", { client: who.client })
      const at = yield* now
      const used = yield* sql<{ email: string }>`
        update sign_in_codes set used_at = ${at}
        where link_digest = ${digestOf(token)} and used_at is null and expires_at > ${at}
        returning email`
      if (used.length === 0) {
        yield* attempts.settle(attempt, { refused: "wrong, used or expired link" })
        return yield* refusedLink
      }
      return yield* signInAddress(used[0]!.email, attempt, who, refusedLink)
    }, orDieOnSql)

    /**
     * Invites an address to the account: 409 when it is already a live member anywhere (one account per address).
     * Returns the invitation and its one-time link; the link is mailed when `mail` is set.
     */
    const invite = Effect.fn("Members.invite")(function* (
      accountId: string,
      rawEmail: string,
      invitedBy: string | null
    ) {
      const email = rawEmail.toLowerCase()
      if (Option.isSome(yield* liveMemberByEmail(email))) {
        return yield* new InvalidState({ message: "This address is already a member of an account." })
      }
      const at = yield* now
      const token = newSecret(INVITE_PREFIX)
      const rows = yield* sql<InviteRow>`
        insert into member_invites (id, account_id, email, token_digest, invited_by, created_at, expires_at)
        values (${ids.next()}, ${accountId}, ${email}, ${digestOf(token)}, ${invitedBy}, ${at},
                ${new Date(at.getTime() + INVITE_TTL_MS)})
        returning id, email, created_at, expires_at, accepted_at`
      const created = toInvite(rows[0]!)
      const url = link(`invite=${token}`)
      const account = yield* accounts.get(accountId)
      const sent = yield* mailer
        .send({
          to: email,
          subject: `You are invited to ${Option.match(account, { onNone: () => "an account", onSome: (a) => a.name })} on Deposits`,
          text: [
            "You are invited to join an account on Deposits.",
            "",
            `Open this link to accept (valid 7 days, once): ${url}`,
            "",
            "If you did not expect it, ignore this message."
          ].join("\n")
        })
        .pipe(Effect.either)
      if (sent._tag === "Left") {
        // The invitation cannot reach its address: withdraw it rather than list one nobody received.
        yield* sql`update member_invites set revoked_at = ${at} where id = ${created.id}`
        return yield* new ServiceUnavailable({
          message: "The invitation could not be mailed; try again later."
        })
      }
      return { invite: created, link: url }
    }, orDieOnSql)

    const listInvites = Effect.fn("Members.listInvites")(function* (accountId: string) {
      const rows = yield* sql<InviteRow>`
        select id, email, created_at, expires_at, accepted_at from member_invites
        where account_id = ${accountId} and revoked_at is null
        order by created_at desc limit 100`
      return rows.map(toInvite)
    }, orDieOnSql)

    const revokeInvite = Effect.fn("Members.revokeInvite")(function* (accountId: string, inviteId: string) {
      const rows = yield* sql`
        update member_invites set revoked_at = ${yield* now}
        where id = ${inviteId} and account_id = ${accountId} and revoked_at is null
        returning id`
      if (rows.length === 0) return yield* NotFound.of("invite")
    }, orDieOnSql)

    /** Accepting an invitation: the invited address becomes a member of the account, and is signed in. */
    const acceptInvite = Effect.fn("Members.acceptInvite")(function* (token: string, who: SignInClient) {
      const attempt = yield* attempts.take("invite", { client: who.client })
      const at = yield* now
      const accepted = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const invites = yield* sql<{
              id: string
              account_id: string
              email: string
              invited_by: string | null
            }>`
            update member_invites set accepted_at = ${at}
            where token_digest = ${digestOf(token)} and accepted_at is null and revoked_at is null
              and expires_at > ${at}
            returning id, account_id, email, invited_by`
            const found = invites[0]
            if (found === undefined) return Option.none()
            const members = yield* sql<{ id: string }>`
            insert into members (id, account_id, email, created_at, invited_by)
            values (${ids.next()}, ${found.account_id}, ${found.email}, ${at}, ${found.invited_by})
            on conflict (email) where removed_at is null do nothing
            returning id`
            // Already a member somewhere (joined since the invitation): the invitation stays unused.
            if (members.length === 0) return yield* Effect.fail("member" as const)
            return Option.some({ memberId: members[0]!.id, accountId: found.account_id, email: found.email })
          })
        )
        .pipe(
          Effect.catchIf(
            (e) => e === "member",
            () => Effect.succeed(Option.none())
          )
        )
      if (Option.isNone(accepted)) {
        yield* attempts.settle(attempt, { refused: "wrong, used, revoked or expired invitation" })
        return yield* refusedInvite
      }
      const member = yield* memberOf(accepted.value.accountId, accepted.value.memberId)
      if (Option.isNone(member)) return yield* Effect.die(new Error("an accepted member vanished"))
      yield* attempts.settle(attempt, "signed_in", { memberId: member.value.id, email: accepted.value.email })
      return yield* sessionFor(member.value, who)
    }, orDieOnSql)

    /**
     * A session for a member another proof (a passkey) identified; none when the member was removed meanwhile,
     * which signs nobody in.
     */
    const sessionForMember = Effect.fn("Members.sessionForMember")(function* (
      accountId: string,
      memberId: string,
      who: SignInClient
    ) {
      const member = yield* memberOf(accountId, memberId)
      if (Option.isNone(member)) return Option.none<SignedIn>()
      return Option.some(yield* sessionFor(member.value, who))
    }, orDieOnSql)

    /** The calling member; 404 for a session without one (the operator CLI's) or a removed member. */
    const getMember = Effect.fn("Members.getMember")(function* (accountId: string, memberId: string | null) {
      const member = memberId === null ? Option.none<Member>() : yield* memberOf(accountId, memberId)
      if (Option.isNone(member)) return yield* NotFound.of("member")
      return member.value
    }, orDieOnSql)

    const listMembers = Effect.fn("Members.listMembers")(function* (accountId: string) {
      const rows = yield* sql<MemberRow>`
        select ${memberColumns} from members m
        where m.account_id = ${accountId} and m.removed_at is null
        order by m.created_at, m.id`
      return rows.map(toMember)
    }, orDieOnSql)

    /**
     * Removes a member: their sessions end at once (here and, through the credential cache's notice, on every
     * instance) and their passkeys are deleted. The last member cannot be removed: the account would be unreachable.
     */
    const removeMember = Effect.fn("Members.removeMember")(function* (accountId: string, memberId: string) {
      yield* sql.withTransaction(
        Effect.gen(function* () {
          const at = yield* now
          // Serialises removals in an account, so two of them cannot both see "another member is left".
          yield* sql`select id from accounts where id = ${accountId} for update`
          const live = yield* sql<{ id: string }>`
            select id from members where account_id = ${accountId} and removed_at is null`
          if (!live.some((m) => m.id === memberId)) return yield* NotFound.of("member")
          if (live.length <= 1) {
            return yield* new InvalidState({ message: "The account's last member cannot be removed." })
          }
          yield* sql`update members set removed_at = ${at} where id = ${memberId}`
          yield* sql`
            update dashboard_sessions set revoked_at = ${at}
            where member_id = ${memberId} and revoked_at is null`
          yield* sql`delete from passkeys where member_id = ${memberId}`
          yield* sql`delete from webauthn_challenges where member_id = ${memberId} and used_at is null`
        })
      )
      yield* cache.changed(accountId)
    }, orDieOnSql)

    /** The member's live sessions, the calling one marked. */
    const listSessions = Effect.fn("Members.listSessions")(function* (
      accountId: string,
      memberId: string,
      currentSessionId: string | null
    ) {
      const rows = yield* sql<{ id: string; created_at: Date; expires_at: Date; user_agent: string | null }>`
        select id, created_at, expires_at, user_agent from dashboard_sessions
        where account_id = ${accountId} and member_id = ${memberId} and revoked_at is null
          and expires_at > ${yield* now}
        order by created_at desc limit 100`
      return rows.map(
        (row): SessionInfo => ({
          id: row.id,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
          userAgent: row.user_agent,
          current: row.id === currentSessionId
        })
      )
    }, orDieOnSql)

    /** Ends one of the member's own live sessions; anyone else's is not found. */
    const endSession = Effect.fn("Members.endSession")(function* (
      accountId: string,
      memberId: string,
      sessionId: string
    ) {
      const ended = yield* sql`
        update dashboard_sessions set revoked_at = ${yield* now}
        where id = ${sessionId} and account_id = ${accountId} and member_id = ${memberId} and revoked_at is null
        returning id`
      if (ended.length === 0) return yield* NotFound.of("session")
      yield* cache.changed(accountId)
    }, orDieOnSql)

    return {
      signUp,
      dashboardOrigin,
      startEmail,
      verifyCode,
      verifyLink,
      invite,
      listInvites,
      revokeInvite,
      acceptInvite,
      getMember,
      sessionForMember,
      listMembers,
      removeMember,
      listSessions,
      endSession
    } as const
  }),
  dependencies: [SignInAttempts.Default, Accounts.Default, CredentialCache.Default, Ids.layer]
}) {}
