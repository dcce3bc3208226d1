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

const WireAmount = Schema.String.annotations({ description: "Decimal USDC with six fractional digits." })
const WireBaseUnits = Schema.String.annotations({ description: "Integer base units as a string of digits." })

const PeriodFigures = Schema.Struct({
  from: Timestamp.annotations({ description: "The local midnight the period starts at, in UTC." }),
  settled_volume: WireAmount,
  settled_volume_base_units: WireBaseUnits,
  settled_count: Schema.Int.annotations({ description: "Requests settled in the period." }),
  created_count: Schema.Int.annotations({ description: "Requests created in the period." }),
  returned_volume: WireAmount.annotations({
    description: "Funds sent back to payers in the period (every `recovered_funds` amount)."
  }),
  returned_volume_base_units: WireBaseUnits
}).annotations({ identifier: "SummaryPeriod" })

export const AccountSummary = Schema.Struct({
  time_zone: Schema.String.annotations({ description: "The IANA zone the days are counted in." }),
  generated_at: Timestamp,
  periods: Schema.Struct({
    today: PeriodFigures,
    last_7_days: PeriodFigures,
    last_30_days: PeriodFigures
  }).annotations({
    description: "Today, the last 7 and the last 30 local days, each up to now (today included)."
  }),
  days: Schema.Array(
    Schema.Struct({
      date: Schema.String.annotations({ description: "The local date, `YYYY-MM-DD`." }),
      settled_volume: WireAmount,
      settled_volume_base_units: WireBaseUnits,
      settled_count: Schema.Int,
      created_count: Schema.Int
    })
  ).annotations({ description: "The last 30 local days, oldest first, today last." }),
  needs_action: Schema.Struct({
    needs_attention_count: Schema.Int.annotations({ description: "Requests paused (`needs_attention`)." }),
    held_transfer_count: Schema.Int.annotations({
      description: "Requests with a settlement or a return held back (a blocked address, a paused token)."
    }),
    expiring_soon_count: Schema.Int.annotations({
      description: "Open requests whose deadline is within the hour."
    }),
    requests: Schema.Array(
      Schema.Struct({
        deposit_request_id: Schema.String,
        reason: Schema.Literal("held_transfer", "needs_attention", "expiring_soon"),
        status: Schema.String,
        amount: WireAmount,
        amount_base_units: WireBaseUnits,
        received: WireAmount,
        received_base_units: WireBaseUnits,
        reference: Schema.String,
        at: Timestamp.annotations({
          description: "When the transfer was held or the request paused; the deadline when expiring soon."
        }),
        message: Schema.NullOr(Schema.String)
      })
    ).annotations({
      description:
        "At most 10, each once, most urgent first: held transfers, then other pauses (oldest first), then deadlines (soonest first)."
    })
  }),
  failing_endpoints: Schema.Array(
    Schema.Struct({
      webhook_id: Schema.String,
      url: Schema.String,
      last_outcome: Schema.String.annotations({ description: "The latest delivery attempt's outcome." }),
      last_attempted_at: Timestamp,
      last_response_status: Schema.NullOr(Schema.Int),
      last_error: Schema.NullOr(Schema.String),
      failures_last_hour: Schema.Int
    })
  ).annotations({
    description:
      "Active endpoints whose latest attempt did not succeed (`retrying`, `failed`) or that failed within the last hour."
  }),
  recent_events: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      type: Schema.String,
      deposit_request_id: Schema.NullOr(Schema.String),
      occurred_at: Timestamp
    })
  ).annotations({ description: "The last 10 events, newest first, as `GET /v1/events` lists them." })
}).annotations({ identifier: "AccountSummary" })

export class AccountApi extends HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("get", "/account")
      .addSuccess(Account)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read the calling account")
  )
  .add(
    HttpApiEndpoint.get("summary", "/account/summary")
      .setUrlParams(
        Schema.Struct({
          time_zone: Schema.optional(
            Schema.String.annotations({
              description:
                "An IANA time zone (`America/Los_Angeles`); the days are its local days. Default `UTC`."
            })
          )
        })
      )
      .addSuccess(AccountSummary)
      .annotate(
        OpenApi.Summary,
        "Summarize the account's day: settled volume by local day, what needs action"
      )
      .annotate(
        OpenApi.Description,
        "The figures the dashboard's overview shows. Settled volume is the sum of the amounts of requests settled in the period (a settlement sends exactly the amount); a settlement counts on the local day its `deposit_request.settled` event occurred."
      )
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
