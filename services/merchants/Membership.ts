import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { InvalidState, NotFound } from "../domain/Errors"
import { CredentialCache } from "./CredentialCache"
import type { Member, MemberRows, SignedIn, SignInClient } from "./MemberRows"
import { orDieOnStorage } from "../platform/SqlFailure"

const MemberAt = Schema.Struct({ memberId: Schema.String, at: Schema.DateFromSelf })

/**
 * The account's members (`Members.getMember`, `sessionForMember`, `listMembers`, `removeMember`): who they are,
 * a session for one another proof identified, and removal, which ends everything the member held.
 */
export const makeMembership = (rows: MemberRows) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* CredentialCache
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const liveIds = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (accountId) =>
        sql`select id from members where account_id = ${accountId} and removed_at is null`
    })
    const markRemoved = SqlSchema.void({
      Request: MemberAt,
      execute: ({ memberId, at }) => sql`update members set removed_at = ${at} where id = ${memberId}`
    })
    const revokeSessionsOf = SqlSchema.void({
      Request: MemberAt,
      execute: ({ memberId, at }) => sql`
        update dashboard_sessions set revoked_at = ${at}
        where member_id = ${memberId} and revoked_at is null`
    })

    /**
     * A session for a member another proof (a passkey) identified; none when the member was removed meanwhile,
     * which signs nobody in.
     */
    const sessionForMember = Effect.fn("Members.sessionForMember")(function* (
      accountId: string,
      memberId: string,
      who: SignInClient
    ) {
      const member = yield* rows.memberOf(accountId, memberId)
      if (Option.isNone(member)) return Option.none<SignedIn>()
      return Option.some(yield* rows.sessionFor(member.value, who))
    }, orDieOnStorage)

    /** The calling member; 404 for a session without one (the operator CLI's) or a removed member. */
    const getMember = Effect.fn("Members.getMember")(function* (accountId: string, memberId: string | null) {
      const member = memberId === null ? Option.none<Member>() : yield* rows.memberOf(accountId, memberId)
      if (Option.isNone(member)) return yield* NotFound.of("member")
      return member.value
    }, orDieOnStorage)

    const listMembers = Effect.fn("Members.listMembers")(function* (accountId: string) {
      return yield* rows.membersOf(accountId)
    }, orDieOnStorage)

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
          const live = yield* liveIds(accountId)
          if (!live.some((m) => m.id === memberId)) return yield* NotFound.of("member")
          if (live.length <= 1) {
            return yield* new InvalidState({ message: "The account's last member cannot be removed." })
          }
          yield* markRemoved({ memberId, at })
          yield* revokeSessionsOf({ memberId, at })
          yield* sql`delete from passkeys where member_id = ${memberId}`
          yield* sql`delete from webauthn_challenges where member_id = ${memberId} and used_at is null`
        })
      )
      yield* cache.changed(accountId)
    }, orDieOnStorage)

    return { getMember, sessionForMember, listMembers, removeMember } as const
  })
