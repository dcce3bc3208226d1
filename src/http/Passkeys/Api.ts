import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Id } from "../../../services/domain/PrefixedId"
import { Text } from "../../../services/domain/Text"
import { Timestamp } from "../../../services/domain/Timestamp"
import { Authentication } from "../Security"
import { SignedIn } from "../SignIn/Api"
import {
  HttpsRequired,
  IdentityUnauthorized,
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthenticated
} from "../Errors"
import { SESSIONS_ONLY, EmptyBody, IdParam, ListOf, StrictStruct, withExample } from "../Schemas"

export const Passkey = Schema.Struct({
  id: Id("pk"),
  name: Schema.String,
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Passkey" })

const Base64Url = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]*$/, { message: () => "must be base64url without padding" }),
  Schema.maxLength(8192)
)

/** What the browser's WebAuthn call produced; the library reads it, so it only needs to be shaped right here. */
const WebAuthnOptions = (identifier: string, description: string) =>
  Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier, description })

export const ChallengeId = Schema.UUID.annotations({
  description: "The ceremony's challenge, as the options answer named it. Used once; valid five minutes."
})

/** WebAuthn's RegistrationResponseJSON (Level 3), as `@simplewebauthn/browser`'s `startRegistration` returns it. */
export const RegistrationResponse = StrictStruct({
  id: Base64Url,
  rawId: Base64Url,
  response: StrictStruct({
    clientDataJSON: Base64Url,
    attestationObject: Base64Url,
    authenticatorData: Schema.optional(Base64Url),
    transports: Schema.optional(
      Schema.Array(Schema.String.pipe(Schema.maxLength(32))).pipe(Schema.maxItems(8))
    ),
    publicKeyAlgorithm: Schema.optional(Schema.Int),
    publicKey: Schema.optional(Base64Url)
  }),
  authenticatorAttachment: Schema.optional(Schema.Literal("platform", "cross-platform")),
  clientExtensionResults: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  type: Schema.Literal("public-key")
}).annotations({ identifier: "RegistrationResponseJSON" })

/** WebAuthn's AuthenticationResponseJSON (Level 3), as `startAuthentication` returns it. */
export const AuthenticationResponse = StrictStruct({
  id: Base64Url,
  rawId: Base64Url,
  response: StrictStruct({
    clientDataJSON: Base64Url,
    authenticatorData: Base64Url,
    signature: Base64Url,
    userHandle: Schema.optional(Base64Url)
  }),
  authenticatorAttachment: Schema.optional(Schema.Literal("platform", "cross-platform")),
  clientExtensionResults: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  type: Schema.Literal("public-key")
}).annotations({ identifier: "AuthenticationResponseJSON" })

// Examples show the shape only: a real answer comes from the browser's WebAuthn call, on a real challenge.
const EXAMPLE_CHALLENGE_ID = "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7c"
const EXAMPLE_CREDENTIAL_ID = "dGhpcy1pcy1hLWNyZWRlbnRpYWwtaWQ"

/** A member's own passkeys: register, list, remove. */
export class PasskeysApi extends HttpApiGroup.make("passkeys")
  .add(
    HttpApiEndpoint.post("registrationOptions", "/account/passkeys/options")
      .setPayload(EmptyBody)
      .addSuccess(
        Schema.Struct({
          challenge_id: Schema.String,
          options: WebAuthnOptions(
            "PublicKeyCredentialCreationOptionsJSON",
            "Pass to `navigator.credentials.create` (through `PublicKeyCredential.parseCreationOptionsFromJSON`) or to `@simplewebauthn/browser`'s `startRegistration({ optionsJSON })`."
          )
        })
      )
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Start registering a passkey for the calling member")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} The challenge is valid five minutes, once. A session of the operator's CLI has no member: 404 \`member_not_found\`.`
      )
  )
  .add(
    HttpApiEndpoint.post("register", "/account/passkeys")
      .setPayload(
        withExample(
          StrictStruct({
            challenge_id: ChallengeId,
            name: Text.pipe(Schema.minLength(1), Schema.maxLength(100)).annotations({
              description: 'The member\'s own label for this passkey ("Work laptop").'
            }),
            response: RegistrationResponse
          }),
          {
            challenge_id: EXAMPLE_CHALLENGE_ID,
            name: "Work laptop",
            response: {
              id: EXAMPLE_CREDENTIAL_ID,
              rawId: EXAMPLE_CREDENTIAL_ID,
              response: {
                clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0",
                attestationObject: "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVgA",
                transports: ["internal", "hybrid"]
              },
              authenticatorAttachment: "platform",
              clientExtensionResults: {},
              type: "public-key"
            }
          }
        )
      )
      .addSuccess(Passkey, { status: 201 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(OpenApi.Summary, "Finish registering a passkey")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} A response that does not verify (wrong challenge, origin or rpID, used or expired challenge): 400 \`invalid_request\`. The same passkey twice: 409 \`invalid_state\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/account/passkeys")
      .addSuccess(ListOf("passkeys", Passkey))
      .annotate(OpenApi.Summary, "List the calling member's passkeys, newest first")
      .annotate(OpenApi.Description, `${SESSIONS_ONLY} Never more than a member registers, so one page.`)
  )
  .add(
    HttpApiEndpoint.del("remove", "/account/passkeys/:id")
      .setPath(Schema.Struct({ id: IdParam("pk") }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Remove one of the calling member's passkeys")
      .annotate(OpenApi.Description, `${SESSIONS_ONLY} Another member's passkey: 404 \`passkey_not_found\`.`)
  )
  .addError(IdentityUnauthorized)
  .addError(PayloadTooLarge)
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(OpenApi.Description, "A member's passkeys (WebAuthn), registered while signed in.") {}

/** Signing in with a passkey: no credential, no address; the passkey names its member. */
export class PasskeySignInApi extends HttpApiGroup.make("passkeySignIn")
  .add(
    HttpApiEndpoint.post("options", "/sign-in/passkey/options")
      .setPayload(EmptyBody)
      .addSuccess(
        Schema.Struct({
          challenge_id: Schema.String,
          options: WebAuthnOptions(
            "PublicKeyCredentialRequestOptionsJSON",
            "Pass to `navigator.credentials.get` (through `PublicKeyCredential.parseRequestOptionsFromJSON`) or to `@simplewebauthn/browser`'s `startAuthentication({ optionsJSON })`."
          )
        })
      )
      .annotate(OpenApi.Summary, "Start signing in with a passkey")
      .annotate(OpenApi.Description, "The challenge is valid five minutes, once.")
  )
  .add(
    HttpApiEndpoint.post("signIn", "/sign-in/passkey")
      .setPayload(
        withExample(StrictStruct({ challenge_id: ChallengeId, response: AuthenticationResponse }), {
          challenge_id: EXAMPLE_CHALLENGE_ID,
          response: {
            id: EXAMPLE_CREDENTIAL_ID,
            rawId: EXAMPLE_CREDENTIAL_ID,
            response: {
              clientDataJSON: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0",
              authenticatorData: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ",
              signature: "MEUCIQC",
              userHandle: "AZD1wn1Oejg"
            },
            authenticatorAttachment: "platform",
            clientExtensionResults: {},
            type: "public-key"
          }
        })
      )
      .addSuccess(SignedIn, { status: 201 })
      .annotate(OpenApi.Summary, "Sign in with a passkey")
      .annotate(
        OpenApi.Description,
        'An unknown passkey, a bad signature, another origin or rpID, a used or expired challenge, or a removed member all answer the same 400 `invalid_request` "The passkey could not be verified."'
      )
  )
  .addError(HttpsRequired)
  .addError(PayloadTooLarge)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .annotate(
    OpenApi.Description,
    "Signing in to the dashboard with a passkey. No credential. Each request counts against the client's sign-in limit (429 `rate_limited` with `Retry-After`); outside the sandbox, plain HTTP from another host answers 403 `https_required`."
  ) {}
