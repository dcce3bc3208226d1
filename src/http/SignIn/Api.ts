import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Account } from "../Account/Api"
import { EmailAddress, Member } from "../Members/Api"
import { HttpsRequired, InvalidRequest, PayloadTooLarge, RateLimited } from "../Errors"
import { Timestamp } from "../../../services/domain/Timestamp"
import { StrictStruct, withExample } from "../Schemas"

export const SignedIn = Schema.Struct({
  session_token: Schema.String.annotations({
    description: "A dashboard session token (`session_…`), for `Authorization: Bearer`. Shown once."
  }),
  expires_at: Timestamp,
  member: Member,
  account: Account
}).annotations({
  identifier: "SignedIn",
  description: "A fresh dashboard session of the member who signed in."
})

export const CodeSent = Schema.Struct({
  sent_to: Schema.String.annotations({ description: "The address, masked: `a***@example.com`." }),
  expires_at: Timestamp.annotations({ description: "When the code and the link stop working." }),
  binding: Schema.String.annotations({
    description:
      "A secret (`bind_…`) for the browser that asked, kept there: the code completes only with it, and the link completes without a confirmation only with it."
  })
}).annotations({ identifier: "CodeSent" })

export const LinkPreview = Schema.Struct({
  email: Schema.String.annotations({ description: "The address the link signs in." }),
  account_name: Schema.NullOr(Schema.String).annotations({
    description: "The account it signs in to; null when signing in creates one (sign-up)."
  }),
  requested_at: Timestamp.annotations({ description: "When the link was asked for." }),
  requested_from: Schema.NullOr(Schema.String).annotations({
    description: "The client address that asked for it, as the sign-in limits count it."
  }),
  requested_user_agent: Schema.NullOr(Schema.String).annotations({
    description: "The User-Agent of the browser that asked for it."
  }),
  expires_at: Timestamp
}).annotations({
  identifier: "LinkPreview",
  description: "What a sign-in link signs in to and who asked for it, for the page that confirms it first."
})

export const InvitePreview = Schema.Struct({
  email: Schema.String.annotations({ description: "The invited address." }),
  account_name: Schema.String.annotations({ description: "The account the invitation joins." }),
  invited_by: Schema.NullOr(Schema.String).annotations({
    description: "The inviting member's address; null when the operator's CLI invited the account's owner."
  }),
  created_at: Timestamp,
  expires_at: Timestamp
}).annotations({
  identifier: "InvitePreview",
  description: "What an invitation joins and who sent it, for the page that asks before accepting it."
})

const Token = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))
const Binding = Token.annotations({ description: "The `binding` the start of this sign-in answered." })
const Confirmed = Schema.Literal(true).annotations({
  description: "The person was shown what it signs in to (the matching `…/preview`) and went on."
})

const limits =
  "No credential. Every attempt is recorded and limited (5 mails per address and 30 attempts per client per 15 minutes; 5 refused codes per address and client and 25 per address per 24 hours: then 429 `rate_limited` with `Retry-After`). Outside the sandbox, plain HTTP from another host answers 403 `https_required`. Body limit 8 KiB."
const refused =
  'A wrong, used or expired code or token answers 400 `invalid_request` ("The code is wrong, already used or expired.").'

export class SignInApi extends HttpApiGroup.make("signIn")
  .add(
    HttpApiEndpoint.post("email", "/sign-in/email")
      .setPayload(withExample(StrictStruct({ email: EmailAddress }), { email: "ada@shop.example.com" }))
      .addSuccess(CodeSent, { status: 202 })
      .annotate(OpenApi.Summary, "Mail a six-digit sign-in code and a sign-in link to an address")
      .annotate(
        OpenApi.Description,
        `${limits} Always 202 for a well-formed address, member or not. The code and the link (its token in the URL fragment, \`/dashboard/#sign-in=…\`) are mailed when the address is a member's, or when sign-up is on (the sandbox's default); they live 10 minutes, work once, and end the address's older code and link. Keep the answer's \`binding\` in the browser that asked: the code needs it.`
      )
  )
  .add(
    HttpApiEndpoint.post("verifyEmail", "/sign-in/email/verify")
      .setPayload(
        withExample(
          StrictStruct({
            email: EmailAddress,
            code: Schema.String.pipe(Schema.maxLength(16)),
            binding: Binding
          }),
          { email: "ada@shop.example.com", code: "123456", binding: "bind_AbCdEf0123456789" }
        )
      )
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Sign in with the mailed code")
      .annotate(
        OpenApi.Description,
        `${limits} ${refused} Only the address's newest code works, and only with the \`binding\` its start answered (a code typed in another browser is refused the same way). With sign-up on, an unknown address's first sign-in creates its account (named after the address's domain) and its first member.`
      )
  )
  .add(
    HttpApiEndpoint.post("linkPreview", "/sign-in/link/preview")
      .setPayload(withExample(StrictStruct({ token: Token }), { token: "signin_AbCdEf0123456789" }))
      .addSuccess(LinkPreview)
      .annotate(
        OpenApi.Summary,
        "Describe a mailed link before completing it: the account, the address, who asked"
      )
      .annotate(
        OpenApi.Description,
        `${limits} ${refused} The link stays unused. The dashboard shows this when a link is opened in a browser without its \`binding\`.`
      )
  )
  .add(
    HttpApiEndpoint.post("link", "/sign-in/link")
      .setPayload(
        withExample(
          StrictStruct({
            token: Token,
            binding: Schema.optional(Binding),
            confirmed: Schema.optional(Confirmed)
          }),
          { token: "signin_AbCdEf0123456789", binding: "bind_AbCdEf0123456789" }
        )
      )
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Sign in with the mailed link's token (the page posts its URL fragment)")
      .annotate(
        OpenApi.Description,
        `${limits} ${refused} It completes with the \`binding\` of the browser that asked for it, or with \`confirmed: true\` once the person saw \`POST /v1/sign-in/link/preview\`; otherwise 400 \`invalid_request\` (param \`confirmed\`) and the link stays unused.`
      )
  )
  .add(
    HttpApiEndpoint.post("invitePreview", "/sign-in/invite/preview")
      .setPayload(withExample(StrictStruct({ token: Token }), { token: "invite_AbCdEf0123456789" }))
      .addSuccess(InvitePreview)
      .annotate(OpenApi.Summary, "Describe an invitation before accepting it: the account and who sent it")
      .annotate(
        OpenApi.Description,
        `${limits} A wrong, used, revoked or expired invitation answers 400 \`invalid_request\`. The invitation stays open.`
      )
  )
  .add(
    HttpApiEndpoint.post("acceptInvite", "/sign-in/invite")
      .setPayload(
        withExample(StrictStruct({ token: Token, confirmed: Confirmed }), {
          token: "invite_AbCdEf0123456789",
          confirmed: true
        })
      )
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Accept an invitation: become a member of the account and sign in")
      .annotate(
        OpenApi.Description,
        `${limits} \`confirmed: true\` says the person saw the account and the inviter (\`POST /v1/sign-in/invite/preview\`). A wrong, used, revoked or expired invitation answers 400 \`invalid_request\`.`
      )
  )
  .addError(InvalidRequest)
  .addError(RateLimited)
  .addError(HttpsRequired)
  .addError(PayloadTooLarge)
  .annotate(
    OpenApi.Description,
    "Signing in to the dashboard by email: a mailed code or link, or an invitation. No credential."
  ) {}
