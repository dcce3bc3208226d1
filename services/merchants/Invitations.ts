import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound, ServiceUnavailable } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { Mailer } from "../platform/Mailer"
import { digestOf, newSecret } from "../platform/Secrets"
import { Accounts } from "./Accounts"
import type { MemberRows, SignInClient } from "./MemberRows"
import { SignInAttempts } from "./SignInAttempts"
import { orDieOnStorage } from "../platform/SqlFailure"

/** How long an invitation waits to be accepted. */
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000

const INVITE_PREFIX = "invite_"

export interface Invite {
  readonly id: string
  readonly email: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly acceptedAt: Date | null
}

const refusedInvite = new InvalidRequest({
  message: "The invitation is wrong, already used, revoked or expired.",
  param: "token"
})

/** What the page that asks before accepting an invitation shows. */
export interface InvitePreview {
  readonly email: string
  readonly accountName: string
  /** The inviting member's address; null when the operator's CLI invited the account's owner. */
  readonly invitedBy: string | null
  readonly createdAt: Date
  readonly expiresAt: Date
}

const InviteRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  accepted_at: Schema.NullOr(Schema.DateFromSelf)
})
const toInvite = (row: typeof InviteRow.Type): Invite => ({
  id: row.id,
  email: row.email,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  acceptedAt: row.accepted_at
})
const NewInvite = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  email: Schema.String,
  token_digest: Schema.Uint8ArrayFromSelf,
  invited_by: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})

/**
 * Invitations to an account (`Members.invite`, `listInvites`, `revokeInvite`, `acceptInvite`): a one-time link,
 * stored as its digest, that makes the invited address a member and signs it in.
 */
export const makeInvitations = (options: {
  readonly rows: MemberRows
  readonly link: (fragment: string) => string
}) =>
  Effect.gen(function* () {
    const { rows, link } = options
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const mailer = yield* Mailer
    const accounts = yield* Accounts
    const attempts = yield* SignInAttempts
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const insertInvite = SqlSchema.single({
      Request: NewInvite,
      Result: InviteRow,
      execute: (row) => sql`
        insert into member_invites (id, account_id, email, token_digest, invited_by, created_at, expires_at)
        values (${row.id}, ${row.account_id}, ${row.email}, ${row.token_digest}, ${row.invited_by},
                ${row.created_at}, ${row.expires_at})
        returning id, email, created_at, expires_at, accepted_at`
    })
    const withdraw = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ id, at }) => sql`update member_invites set revoked_at = ${at} where id = ${id}`
    })
    const openInvites = SqlSchema.findAll({
      Request: Schema.String,
      Result: InviteRow,
      execute: (accountId) => sql`
        select id, email, created_at, expires_at, accepted_at from member_invites
        where account_id = ${accountId} and revoked_at is null
        order by created_at desc limit 100`
    })
    const revokeOpen = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, inviteId: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ accountId, inviteId, at }) => sql`
        update member_invites set revoked_at = ${at}
        where id = ${inviteId} and account_id = ${accountId} and revoked_at is null
        returning id`
    })
    const openByToken = SqlSchema.findOne({
      Request: Schema.Struct({ digest: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf }),
      Result: Schema.Struct({
        email: Schema.String,
        account_name: Schema.String,
        invited_by: Schema.NullOr(Schema.String),
        created_at: Schema.DateFromSelf,
        expires_at: Schema.DateFromSelf
      }),
      execute: ({ digest, at }) => sql`
        select i.email, a.name as account_name, m.email as invited_by, i.created_at, i.expires_at
        from member_invites i
        join accounts a on a.id = i.account_id
        left join members m on m.id = i.invited_by
        where i.token_digest = ${digest} and i.accepted_at is null and i.revoked_at is null
          and i.expires_at > ${at}`
    })
    const acceptOpen = SqlSchema.findOne({
      Request: Schema.Struct({ digest: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf }),
      Result: NewInvite.pipe(Schema.pick("id", "account_id", "email", "invited_by")),
      execute: ({ digest, at }) => sql`
        update member_invites set accepted_at = ${at}
        where token_digest = ${digest} and accepted_at is null and revoked_at is null
          and expires_at > ${at}
        returning id, account_id, email, invited_by`
    })

    /**
     * Invites an address to the account: 409 when it is already one of this account's members. An address that
     * is a member of another account is answered as any other (the answer must not tell that it uses the service):
     * its invitation is listed as usual, but the address is mailed a notice without the link (one account per
     * address), saying how it could join. Returns the invitation and its one-time link.
     */
    const invite = Effect.fn("Members.invite")(function* (
      accountId: string,
      rawEmail: string,
      invitedBy: string | null
    ) {
      const email = rawEmail.toLowerCase()
      const existing = yield* rows.liveMemberByEmail(email)
      if (Option.isSome(existing) && existing.value.accountId === accountId) {
        return yield* new InvalidState({ message: "This address is already a member of this account." })
      }
      const elsewhere = Option.isSome(existing)
      const at = yield* now
      const token = newSecret(INVITE_PREFIX)
      const created = toInvite(
        yield* insertInvite({
          id: ids.next(),
          account_id: accountId,
          email,
          token_digest: digestOf(token),
          invited_by: invitedBy,
          created_at: at,
          expires_at: new Date(at.getTime() + INVITE_TTL_MS)
        })
      )
      const url = link(`invite=${token}`)
      const account = yield* accounts.get(accountId)
      const accountName = Option.match(account, { onNone: () => "an account", onSome: (a) => a.name })
      const inviter = invitedBy === null ? Option.none() : yield* rows.memberOf(accountId, invitedBy)
      const by = Option.match(inviter, {
        onNone: () => "The account's operator",
        onSome: (m) => m.email
      })
      const sent = yield* mailer
        .send(
          elsewhere
            ? {
                to: email,
                subject: `You were invited to ${accountName} on Deposits`,
                text: [
                  `${by} invited this address to join ${accountName} on Deposits.`,
                  "",
                  "This address already belongs to another Deposits account, and an address belongs to one",
                  "account at a time, so no link to accept was sent. To join, ask to be invited with another",
                  "address, or leave your current account first (a member there removes you) and ask again.",
                  "",
                  "If you did not expect it, ignore this message: nothing has changed."
                ].join("\n")
              }
            : {
                to: email,
                subject: `You are invited to ${accountName} on Deposits`,
                text: [
                  `${by} invited you to join ${accountName} on Deposits.`,
                  "",
                  `Open this link to accept (valid 7 days, once): ${url}`,
                  "",
                  "If you did not expect it, ignore this message."
                ].join("\n")
              }
        )
        .pipe(Effect.either)
      if (sent._tag === "Left") {
        // The invitation cannot reach its address: withdraw it rather than list one nobody received.
        yield* withdraw({ id: created.id, at })
        return yield* new ServiceUnavailable({
          message: "The invitation could not be mailed; try again later."
        })
      }
      return { invite: created, link: url }
    }, orDieOnStorage)

    const listInvites = Effect.fn("Members.listInvites")(function* (accountId: string) {
      return (yield* openInvites(accountId)).map(toInvite)
    }, orDieOnStorage)

    const revokeInvite = Effect.fn("Members.revokeInvite")(function* (accountId: string, inviteId: string) {
      const revoked = yield* revokeOpen({ accountId, inviteId, at: yield* now })
      if (Option.isNone(revoked)) return yield* NotFound.of("invite")
    }, orDieOnStorage)

    /**
     * What an invitation joins, for the page that names the account and the inviter before it is accepted. The
     * invitation stays open.
     */
    const previewInvite = Effect.fn("Members.previewInvite")(function* (token: string, who: SignInClient) {
      const attempt = yield* attempts.take("invite", { client: who.client })
      const found = yield* openByToken({ digest: digestOf(token), at: yield* now })
      if (Option.isNone(found)) {
        yield* attempts.settle(attempt, { refused: "wrong, used, revoked or expired invitation" })
        return yield* refusedInvite
      }
      yield* attempts.settle(attempt, "previewed", { email: found.value.email })
      return {
        email: found.value.email,
        accountName: found.value.account_name,
        invitedBy: found.value.invited_by,
        createdAt: found.value.created_at,
        expiresAt: found.value.expires_at
      } satisfies InvitePreview
    }, orDieOnStorage)

    /**
     * Accepting an invitation, once the person confirmed the page naming the account and the inviter: the invited
     * address becomes a member of the account, and is signed in.
     */
    const acceptInvite = Effect.fn("Members.acceptInvite")(function* (token: string, who: SignInClient) {
      const attempt = yield* attempts.take("invite", { client: who.client })
      const at = yield* now
      const accepted = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const found = yield* acceptOpen({ digest: digestOf(token), at })
            if (Option.isNone(found)) return Option.none()
            const invited = found.value
            const member = yield* rows.insertLive({
              id: ids.next(),
              account_id: invited.account_id,
              email: invited.email,
              created_at: at,
              invited_by: invited.invited_by
            })
            // Already a member somewhere (joined since the invitation): the invitation stays unused.
            if (Option.isNone(member)) return yield* Effect.fail("member" as const)
            return Option.some({
              memberId: member.value.id,
              accountId: invited.account_id,
              email: invited.email
            })
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
      const member = yield* rows.memberOf(accepted.value.accountId, accepted.value.memberId)
      if (Option.isNone(member)) return yield* Effect.die(new Error("an accepted member vanished"))
      yield* attempts.settle(attempt, "signed_in", { memberId: member.value.id, email: accepted.value.email })
      return yield* rows.sessionFor(member.value, who)
    }, orDieOnStorage)

    return { invite, listInvites, revokeInvite, previewInvite, acceptInvite } as const
  })
