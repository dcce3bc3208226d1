import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { toId } from "../../../services/domain/PrefixedId"
import type { Account } from "../../../services/merchants/Accounts"
import { type Member, Members, type SignedIn } from "../../../services/merchants/Members"
import { Api } from "../Api"
import { requireSecureSignIn } from "../middleware/SignInTransport"
import { recordChange } from "../middleware/AuditTrail"

export const memberWire = (member: Member) => ({
  id: toId("mem", member.id),
  email: member.email,
  created_at: member.createdAt,
  passkeys: member.passkeys
})

export const accountWire = (account: Account) => ({
  id: toId("acct", account.id),
  name: account.name,
  environment: account.environment,
  created_at: account.createdAt
})

/** The answer of every route that signs someone in. */
export const signedInWire = (signedIn: SignedIn) => ({
  session_token: signedIn.token,
  expires_at: signedIn.expiresAt,
  member: memberWire(signedIn.member),
  account: accountWire(signedIn.account)
})

export const SignInLive = HttpApiBuilder.group(Api, "signIn", (handlers) =>
  Effect.gen(function* () {
    const members = yield* Members
    return handlers
      .handle("email", ({ payload }) =>
        Effect.gen(function* () {
          const who = yield* requireSecureSignIn
          const sent = yield* members.startEmail(payload.email, who)
          return { sent_to: sent.sentTo, expires_at: sent.expiresAt, binding: sent.binding }
        })
      )
      .handle("verifyEmail", ({ payload }) =>
        Effect.map(
          Effect.flatMap(requireSecureSignIn, (who) =>
            members.verifyCode(payload.email, payload.code, who, { binding: payload.binding })
          ),
          signedInWire
        )
      )
      .handle("linkPreview", ({ payload }) =>
        Effect.map(
          Effect.flatMap(requireSecureSignIn, (who) => members.previewLink(payload.token, who)),
          (preview) => ({
            email: preview.email,
            account_name: preview.accountName,
            requested_at: preview.requestedAt,
            requested_from: preview.requestedFrom,
            requested_user_agent: preview.requestedUserAgent,
            expires_at: preview.expiresAt
          })
        )
      )
      .handle("link", ({ payload }) =>
        Effect.map(
          Effect.flatMap(requireSecureSignIn, (who) =>
            members.verifyLink(payload.token, who, { binding: payload.binding, confirmed: payload.confirmed })
          ),
          signedInWire
        )
      )
      .handle("invitePreview", ({ payload }) =>
        Effect.map(
          Effect.flatMap(requireSecureSignIn, (who) => members.previewInvite(payload.token, who)),
          (preview) => ({
            email: preview.email,
            account_name: preview.accountName,
            invited_by: preview.invitedBy,
            created_at: preview.createdAt,
            expires_at: preview.expiresAt
          })
        )
      )
      .handle("acceptInvite", ({ payload }) =>
        Effect.gen(function* () {
          const who = yield* requireSecureSignIn
          const signedIn = yield* members.acceptInvite(payload.token, who)
          // No credential made this change but the invitation: the new member is its actor.
          const joined = {
            accountId: signedIn.account.id,
            via: "session",
            memberId: signedIn.member.id,
            sessionId: null
          } as const
          yield* recordChange(joined, who, "member.joined", toId("mem", signedIn.member.id))
          return signedInWire(signedIn)
        })
      )
  })
)
