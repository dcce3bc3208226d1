import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import {
  IdentityUnauthorized,
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable,
  Unauthenticated
} from "../Errors"
import type { NoticeKind } from "../../../services/merchants/MemberNotices"
import { Id } from "../../../services/domain/PrefixedId"
import { Timestamp } from "../../../services/domain/Timestamp"
import { SESSIONS_ONLY, IdParam, ListOf, StrictStruct, withExample } from "../Schemas"

/** An email address as sign-in and invitations take it: compared lower-cased. */
export const EmailAddress = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u, {
    message: () => "must be an email address such as ada@example.com"
  })
).annotations({ identifier: "EmailAddress", description: "An email address (compared without case)." })

export const Member = Schema.Struct({
  id: Id("mem"),
  email: Schema.String,
  created_at: Timestamp,
  passkeys: Schema.Int.annotations({ description: "How many passkeys the member has registered." })
}).annotations({ identifier: "Member", description: "One of the account's people, who signs in by email." })

export const Invite = Schema.Struct({
  id: Id("inv"),
  email: Schema.String,
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: Schema.NullOr(Timestamp).annotations({ description: "When it was accepted, or null." })
}).annotations({
  identifier: "Invite",
  description: "An invitation to join the account, valid 7 days, once."
})

export const SessionInfo = Schema.Struct({
  id: Id("ses"),
  created_at: Timestamp,
  expires_at: Timestamp,
  user_agent: Schema.NullOr(Schema.String).annotations({
    description: "The browser's User-Agent when the session began."
  }),
  current: Schema.Boolean.annotations({ description: "True for the session making this request." })
}).annotations({ identifier: "SessionInfo", description: "A dashboard session of the calling member." })

const KIND_DESCRIPTIONS = {
  request_paused: "A deposit request entered `needs_attention` (the mail names its attention code).",
  endpoint_failing:
    "A webhook endpoint's delivery series failed for good after its last attempt, or every delivery to it has failed for an hour.",
  return_held: "A return or recovery to a payer was held (for example `payer_wallet_blocked`)."
} as const satisfies Record<NoticeKind, string>

export const NoticePreferences = withExample(
  Schema.Struct({
    request_paused: Schema.Boolean.annotations({ description: KIND_DESCRIPTIONS.request_paused }),
    endpoint_failing: Schema.Boolean.annotations({ description: KIND_DESCRIPTIONS.endpoint_failing }),
    return_held: Schema.Boolean.annotations({ description: KIND_DESCRIPTIONS.return_held })
  }).annotations({
    identifier: "NoticePreferences",
    description:
      "Which notices the calling member is mailed, per kind (every kind is on until turned off). Notices are batched: the first one of a burst waits `NOTICE_BATCH_WINDOW_MS` (default 60 s), then one mail lists them all."
  }),
  { request_paused: true, endpoint_failing: true, return_held: false }
)

export const NoticePreferencesChange = withExample(
  StrictStruct({
    request_paused: Schema.optional(Schema.Boolean),
    endpoint_failing: Schema.optional(Schema.Boolean),
    return_held: Schema.optional(Schema.Boolean)
  }).annotations({
    identifier: "NoticePreferencesChange",
    description:
      "The kinds to turn on (true) or off (false); kinds not named stay as they are. Any other field: 400."
  }),
  { request_paused: false }
)

export class MembersApi extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("me", "/account/member")
      .addSuccess(Member)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read the calling member")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} A session the operator's CLI issued belongs to no member: 404 \`member_not_found\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("notices", "/account/member/notices")
      .addSuccess(NoticePreferences)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read which notices the calling member is mailed")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} A session the operator's CLI issued belongs to no member: 404 \`member_not_found\`.`
      )
  )
  .add(
    HttpApiEndpoint.patch("updateNotices", "/account/member/notices")
      .setPayload(NoticePreferencesChange)
      .addSuccess(NoticePreferences)
      .addError(NotFound)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Turn kinds of notice on or off for the calling member")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} Only the caller's own choices change; a mail already on its way is not recalled, a burst not yet mailed follows the new choice. An unknown kind answers 400 \`invalid_request\`; a session without a member 404 \`member_not_found\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/account/members")
      .addSuccess(ListOf("members", Member))
      .annotate(OpenApi.Summary, "List the account's members, oldest first")
      .annotate(OpenApi.Description, SESSIONS_ONLY)
  )
  .add(
    HttpApiEndpoint.del("remove", "/account/members/:id")
      .setPath(Schema.Struct({ id: IdParam("mem") }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(OpenApi.Summary, "Remove a member: their sessions end at once and their passkeys are deleted")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} Removing the account's last member answers 409 \`invalid_state\`; another account's member 404.`
      )
  )
  .add(
    HttpApiEndpoint.get("listInvites", "/account/invites")
      .addSuccess(ListOf("invites", Invite))
      .annotate(OpenApi.Summary, "List the account's invitations (pending and accepted), newest first")
      .annotate(OpenApi.Description, SESSIONS_ONLY)
  )
  .add(
    HttpApiEndpoint.post("invite", "/account/invites")
      .setPayload(withExample(StrictStruct({ email: EmailAddress }), { email: "grace@shop.example.com" }))
      .addSuccess(Invite, { status: 201 })
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Invite someone to the account by email")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} Mails a link to the dashboard carrying a one-time token in its fragment, valid 7 days; accepting it (\`POST /v1/sign-in/invite\`) creates the member. An address already a member of this account answers 409 \`invalid_state\`; one that belongs to another account is answered as any other, and is mailed a notice instead of the link (an address belongs to one account).`
      )
  )
  .add(
    HttpApiEndpoint.del("revokeInvite", "/account/invites/:id")
      .setPath(Schema.Struct({ id: IdParam("inv") }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Revoke an invitation: its link stops working")
      .annotate(OpenApi.Description, SESSIONS_ONLY)
  )
  .add(
    HttpApiEndpoint.get("listSessions", "/account/sessions")
      .addSuccess(ListOf("sessions", SessionInfo))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List the calling member's live sessions, newest first")
      .annotate(OpenApi.Description, SESSIONS_ONLY)
  )
  .add(
    HttpApiEndpoint.del("endSession", "/account/sessions/:id")
      .setPath(Schema.Struct({ id: IdParam("ses") }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "End one of the calling member's sessions (on every instance at once)")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} An unknown session, another member's, or any session asked by the operator CLI's session (which has no member) answers 404 \`session_not_found\`.`
      )
  )
  .addError(Unauthenticated)
  .addError(IdentityUnauthorized)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "The account's people: members, invitations and the calling member's sessions. Dashboard sessions only."
  ) {}
