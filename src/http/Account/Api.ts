import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SESSIONS_ONLY, EmptyBody } from "../Schemas"
import { Authentication } from "../Security"
import {
  IdentityUnauthorized,
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthenticated
} from "../Errors"
import { Id } from "../../../services/domain/PrefixedId"
import { Timestamp } from "../../../services/domain/Timestamp"

// A Struct, not a Class: encoding the answer then needs no instance built per request (it is the hot read).
export const Account = Schema.Struct({
  id: Id("acct"),
  name: Schema.String,
  environment: Schema.Literal("sandbox", "production"),
  created_at: Timestamp
}).annotations({ identifier: "Account" })

export class ApiKeyInfo extends Schema.Class<ApiKeyInfo>("ApiKeyInfo")({
  active: Schema.NullOr(Schema.Struct({ last4: Schema.String, created_at: Timestamp })),
  previous: Schema.NullOr(Schema.Struct({ last4: Schema.String, valid_until: Timestamp })).annotations({
    description: "The key this one replaced, while its 24-hour grace period runs."
  })
}) {}

export class IssuedApiKey extends Schema.Class<IssuedApiKey>("IssuedApiKey")({
  api_key: Schema.String.annotations({
    description: "The key itself. Shown once: only its SHA-256 digest is kept."
  }),
  last4: Schema.String,
  created_at: Timestamp,
  previous_key_expires_at: Schema.NullOr(Timestamp).annotations({
    description: "Until when the replaced key keeps working (24 hours), or null when there was none."
  })
}) {}

export class Session extends Schema.Class<Session>("Session")({
  session_token: Schema.String.annotations({ description: "A dashboard session token. Shown once." }),
  expires_at: Timestamp
}) {}

export class AccountApi extends HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("get", "/account")
      .addSuccess(Account)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read the calling account")
  )
  .add(
    HttpApiEndpoint.get("getApiKey", "/account/api-key")
      .addSuccess(ApiKeyInfo)
      .addError(IdentityUnauthorized)
      .annotate(OpenApi.Summary, "Describe the active API key and the one in its grace period")
      .annotate(OpenApi.Description, SESSIONS_ONLY)
  )
  .add(
    HttpApiEndpoint.post("issueApiKey", "/account/api-key")
      .setPayload(EmptyBody)
      .addSuccess(IssuedApiKey, { status: 201 })
      .addError(IdentityUnauthorized)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Issue a new API key, replacing the active one")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} The replaced key keeps working for 24 hours; any older key in its grace period ends now.`
      )
  )
  .add(
    HttpApiEndpoint.del("revokeApiKey", "/account/api-key")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(IdentityUnauthorized)
      .annotate(OpenApi.Summary, "Revoke every API key of the account at once, the grace key included")
      .annotate(OpenApi.Description, SESSIONS_ONLY)
  )
  .add(
    HttpApiEndpoint.post("refreshSession", "/account/session")
      .setPayload(EmptyBody)
      .addSuccess(Session, { status: 201 })
      .addError(IdentityUnauthorized)
      .annotate(OpenApi.Summary, "Exchange the calling dashboard session for a fresh one (the old one ends)")
  )
  .add(
    HttpApiEndpoint.del("endSession", "/account/session")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(IdentityUnauthorized)
      .annotate(OpenApi.Summary, "Log out: end the calling dashboard session")
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "The account behind the credential. Accounts and a first session come from the CLI (`npm run cli -- sandbox`)."
  ) {}
