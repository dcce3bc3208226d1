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
  expires_at: Timestamp.annotations({ description: "When the code and the link stop working." })
}).annotations({ identifier: "CodeSent" })

const Token = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))

const limits =
  "No credential. Every attempt is recorded and limited (5 mails per address, 10 refused codes per address and 30 attempts per client, each per 15 minutes: then 429 `rate_limited` with `Retry-After`). Outside the sandbox, plain HTTP from another host answers 403 `https_required`. Body limit 8 KiB."
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
        `${limits} Always 202 for a well-formed address, member or not. The code and the link (its token in the URL fragment, \`/dashboard/#sign-in=…\`) are mailed when the address is a member's, or when sign-up is on (the sandbox's default); they live 10 minutes and work once.`
      )
  )
  .add(
    HttpApiEndpoint.post("verifyEmail", "/sign-in/email/verify")
      .setPayload(
        withExample(StrictStruct({ email: EmailAddress, code: Schema.String.pipe(Schema.maxLength(16)) }), {
          email: "ada@shop.example.com",
          code: "123456"
        })
      )
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Sign in with the mailed code")
      .annotate(
        OpenApi.Description,
        `${limits} ${refused} With sign-up on, an unknown address's first sign-in creates its account (named after the address's domain) and its first member.`
      )
  )
  .add(
    HttpApiEndpoint.post("link", "/sign-in/link")
      .setPayload(withExample(StrictStruct({ token: Token }), { token: "signin_AbCdEf0123456789" }))
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Sign in with the mailed link's token (the page posts its URL fragment)")
      .annotate(OpenApi.Description, `${limits} ${refused}`)
  )
  .add(
    HttpApiEndpoint.post("acceptInvite", "/sign-in/invite")
      .setPayload(withExample(StrictStruct({ token: Token }), { token: "invite_AbCdEf0123456789" }))
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Accept an invitation: become a member of the account and sign in")
      .annotate(
        OpenApi.Description,
        `${limits} A wrong, used, revoked or expired invitation answers 400 \`invalid_request\`.`
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
