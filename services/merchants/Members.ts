import { Effect } from "effect"
import { Ids } from "../platform/Ids"
import { Accounts } from "./Accounts"
import { CredentialCache } from "./CredentialCache"
import { makeEmailSignIn } from "./EmailSignIn"
import { makeInvitations } from "./Invitations"
import { makeMemberRows } from "./MemberRows"
import { makeMemberSessions } from "./MemberSessions"
import { makeMembership } from "./Membership"
import { dashboardLink, dashboardOriginSetting, signUpOn } from "./MemberSettings"
import { SignInAttempts } from "./SignInAttempts"

export { SIGN_IN_CODE_TTL_MS, type LinkPreview, type SignInProof } from "./EmailSignIn"
export { INVITE_TTL_MS, type Invite, type InvitePreview } from "./Invitations"
export type { Member, SignedIn, SignInClient } from "./MemberRows"
export type { SessionInfo } from "./MemberSessions"
export { dashboardOriginSetting, maskEmail, signUpSetting } from "./MemberSettings"

/**
 * The account's people (infra/decisions/0059-members-and-sign-in.md): sign-in by a mailed code or link, sign-up
 * when it is on (EmailSignIn), invitations (Invitations), members (Membership) and their sessions
 * (MemberSessions). Every secret is stored as a SHA-256 digest and mailed only inside a link's fragment; every
 * sign-in attempt goes through `SignInAttempts` (recorded and limited).
 */
export class Members extends Effect.Service<Members>()("deposits/Members", {
  effect: Effect.gen(function* () {
    const signUp = yield* signUpOn
    const dashboardOrigin = yield* dashboardOriginSetting
    const link = dashboardLink(dashboardOrigin)
    const rows = yield* makeMemberRows
    const emailSignIn = yield* makeEmailSignIn({ rows, signUp, link })
    const invitations = yield* makeInvitations({ rows, link })
    const membership = yield* makeMembership(rows)
    const sessions = yield* makeMemberSessions
    return {
      signUp,
      dashboardOrigin,
      ...emailSignIn,
      ...invitations,
      ...membership,
      ...sessions
    } as const
  }),
  dependencies: [SignInAttempts.Default, Accounts.Default, CredentialCache.Default, Ids.Default]
}) {}
