import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type IdPrefix, toId, uuidFromId } from "../../../services/domain/PrefixedId"
import { MemberNotices } from "../../../services/merchants/MemberNotices"
import { type Invite, Members } from "../../../services/merchants/Members"
import { Api } from "../Api"
import { requireSession } from "../middleware/Authentication"
import { NotFound } from "../Errors"
import { memberWire } from "../SignIn/Http"
import { afterChange } from "../middleware/AuditTrail"

const what = "The account's people"

/** A path id of the given prefix, or 404 for the resource (malformed, bare or of another prefix). */
const requireId = (prefix: IdPrefix, resource: "member" | "invite" | "session", id: string) => {
  const uuid = uuidFromId(prefix, id)
  return uuid === undefined ? Effect.fail(NotFound.of(resource)) : Effect.succeed(uuid)
}

/** The calling member; an operator CLI session has none, so it is 404 `member_not_found` where one is needed. */
const requireMember = Effect.flatMap(requireSession(what), (identity) =>
  identity.memberId === null
    ? Effect.fail(NotFound.of("member"))
    : Effect.succeed({ ...identity, memberId: identity.memberId })
)

const inviteWire = (invite: Invite) => ({
  id: toId("inv", invite.id),
  email: invite.email,
  created_at: invite.createdAt,
  expires_at: invite.expiresAt,
  accepted_at: invite.acceptedAt
})

export const MembersLive = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.gen(function* () {
    const members = yield* Members
    const notices = yield* MemberNotices
    return handlers
      .handle("me", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          return memberWire(yield* members.getMember(identity.accountId, identity.memberId))
        })
      )
      .handle("notices", () =>
        Effect.gen(function* () {
          const identity = yield* requireMember
          return yield* notices.preferences(identity.memberId)
        })
      )
      .handle("updateNotices", ({ payload }) =>
        Effect.gen(function* () {
          const identity = yield* requireMember
          return yield* notices.setPreferences(identity.memberId, payload)
        })
      )
      .handle("list", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          const list = yield* members.listMembers(identity.accountId)
          return { members: list.map(memberWire), next_cursor: null }
        })
      )
      .handle("remove", ({ path }) =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          const uuid = yield* requireId("mem", "member", path.id)
          yield* members
            .removeMember(identity.accountId, uuid)
            .pipe(afterChange("member.removed", () => path.id))
        })
      )
      .handle("listInvites", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          const list = yield* members.listInvites(identity.accountId)
          return { invites: list.map(inviteWire), next_cursor: null }
        })
      )
      .handle("invite", ({ payload }) =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          const created = yield* members
            .invite(identity.accountId, payload.email, identity.memberId)
            .pipe(afterChange("member.invited", (c) => toId("inv", c.invite.id)))
          return inviteWire(created.invite)
        })
      )
      .handle("revokeInvite", ({ path }) =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          const uuid = yield* requireId("inv", "invite", path.id)
          yield* members
            .revokeInvite(identity.accountId, uuid)
            .pipe(afterChange("member.invite_revoked", () => path.id))
        })
      )
      .handle("listSessions", () =>
        Effect.gen(function* () {
          const identity = yield* requireMember
          const list = yield* members.listSessions(identity.accountId, identity.memberId, identity.sessionId)
          return {
            sessions: list.map((s) => ({
              id: toId("ses", s.id),
              created_at: s.createdAt,
              expires_at: s.expiresAt,
              user_agent: s.userAgent,
              current: s.current
            })),
            next_cursor: null
          }
        })
      )
      .handle("endSession", ({ path }) =>
        Effect.gen(function* () {
          const identity = yield* requireSession(what)
          const uuid = yield* requireId("ses", "session", path.id)
          // A session without a member (the operator CLI's) has no member sessions to end: none is found.
          if (identity.memberId === null) return yield* NotFound.of("session")
          yield* members.endSession(identity.accountId, identity.memberId, uuid)
        })
      )
  })
)
