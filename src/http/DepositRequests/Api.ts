import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Lifecycle from "../../../services/domain/Lifecycle"
import { ParseResult, Schema } from "effect"
import { Authentication } from "../Security"
import {
  IdempotencyConflict,
  IdentityUnauthorized,
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthenticated
} from "../Errors"
import { Address } from "../../../services/domain/Address"
import { Amount } from "../../../services/domain/Amount"
import {
  DecimalInteger,
  exampleId,
  IdParam,
  Limit,
  ListOf,
  Metadata,
  StrictStruct,
  withExample
} from "../Schemas"
import { Id } from "../../../services/domain/PrefixedId"
import { Text } from "../../../services/domain/Text"
import { NOT_AN_INSTANT, parseInstant } from "../../../services/domain/Instant"
import { recogniseSearch, UNSEARCHABLE_ID_PATTERN } from "../../../services/domain/ListSearch"
import { rfc3339Pattern, Timestamp } from "../../../services/domain/Timestamp"
import { WebhookDelivery } from "../Webhooks/Api"

/** The status values: the top-level states of the lifecycle machine (listed once, in the domain). */
export const DepositRequestStatus = Lifecycle.DepositRequestStatus.annotations({
  identifier: "DepositRequestStatus"
})

export const PayerPolicyMode = Lifecycle.PayerPolicyMode.annotations({
  identifier: "PayerPolicyMode",
  description:
    "`none`: the payer attests a wallet and pays. `mailbox`: the payer first proves the expected mailbox with a one-time code. `merchant_session`: the payer screen first exchanges the secret the merchant received at creation."
})

const WireAmount = Schema.String.annotations({ description: "Decimal USDC with six fractional digits." })
const WireBaseUnits = Schema.String.annotations({ description: "Integer base units as a string of digits." })
const WireTimestamp = Schema.String.annotations({ description: "RFC 3339 UTC, second precision, Z." })
const WireAddress = Schema.String.annotations({ description: "EIP-55 checksummed address." })

export const Attention = Schema.Struct({
  code: Schema.String.annotations({
    description: "Why automatic movement paused (see the README's attention codes)."
  }),
  message: Schema.String,
  since: WireTimestamp,
  resolution: Schema.String.annotations({ description: "What an operator does to resume." })
}).annotations({ identifier: "Attention" })

export const Settlement = Schema.Struct({
  payout_address: WireAddress,
  amount: WireAmount,
  amount_base_units: WireBaseUnits,
  transaction_hash: Schema.NullOr(Schema.String),
  block_number: Schema.NullOr(Schema.String),
  settled_at: Schema.NullOr(WireTimestamp)
}).annotations({ identifier: "Settlement" })

export const Cancellation = Schema.Struct({
  reason: Schema.NullOr(Schema.String).annotations({
    description: "The merchant's words, when it gave any."
  }),
  cancelled_at: WireTimestamp
}).annotations({
  identifier: "Cancellation",
  description: "Set when the merchant cancelled the request before anything arrived; it then expired at once."
})

export const Transfer = Schema.Struct({
  direction: Schema.Literal("in", "out"),
  kind: Schema.Literal("payment", "settlement", "return").annotations({
    description:
      "`payment`: a token transfer into the deposit address; `settlement`: the amount to the payout address; `return`: funds back to the payer's wallet."
  }),
  amount: WireAmount,
  amount_base_units: WireBaseUnits,
  from: WireAddress,
  to: WireAddress,
  transaction_hash: Schema.String,
  log_index: Schema.NullOr(Schema.Number).annotations({ description: "For `in`: the log of the transfer." }),
  block_number: Schema.NullOr(Schema.String),
  finality: Schema.Literal("pending", "finalized", "reverted").annotations({
    description:
      "Payments are listed once their block is final. Outgoing transfers are `pending` from signing until their block is final."
  }),
  at: WireTimestamp.annotations({ description: "When it was seen (in) or signed (out)." })
}).annotations({ identifier: "Transfer" })

export const Recovery = Schema.Struct({
  id: Schema.String,
  amount: WireAmount,
  amount_base_units: WireBaseUnits,
  reason: Schema.String.annotations({
    description: "`overpayment`, `expired_balance` or `late_transfer` (see the README)."
  }),
  transaction_hash: Schema.String,
  block_number: Schema.String,
  recovered_at: WireTimestamp
}).annotations({ identifier: "Recovery" })

/** The merchant's view: the webhook subset of the spec plus the private fields only the merchant sees. */
export const DepositRequest = Schema.Struct({
  id: Schema.String,
  status: DepositRequestStatus,
  amount: WireAmount,
  amount_base_units: WireBaseUnits,
  received: WireAmount,
  received_base_units: WireBaseUnits,
  heading: Schema.String,
  reference: Schema.String,
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  customer_id: Schema.NullOr(Schema.String),
  issuer_id: Schema.String,
  payer_policy_mode: PayerPolicyMode,
  payer_reference: Schema.NullOr(Schema.String),
  verification_completed_at: Schema.NullOr(WireTimestamp),
  likely_unsolicited_at: Schema.NullOr(WireTimestamp),
  payer_wallet: Schema.NullOr(WireAddress),
  address: Schema.NullOr(WireAddress),
  wallet_bound_at: Schema.NullOr(WireTimestamp),
  expires_at: WireTimestamp,
  created_at: WireTimestamp,
  // merchant-only fields
  payout_address_id: Schema.String,
  expected_email: Schema.NullOr(Schema.String),
  return_url: Schema.NullOr(Schema.String).annotations({
    description:
      "Where the hosted checkout links the payer back to your shop (on the receipt, when the request closes, and while waiting); null when none was given. Set at creation only."
  }),
  attention: Schema.NullOr(Attention),
  settlement: Schema.NullOr(Settlement),
  cancellation: Schema.NullOr(Cancellation),
  chain_id: Schema.Number,
  checkout_url: Schema.String.annotations({
    description:
      "The hosted checkout page of this request (under `PUBLIC_BASE_URL`): redirect the payer here."
  }),
  version: Schema.String.annotations({
    description: "Changes with every change; pass it to `wait_for=change`."
  }),
  updated_at: WireTimestamp
}).annotations({ identifier: "DepositRequest" })

export const VerificationAttempt = Schema.Struct({
  id: Schema.String.annotations({ description: "A `va_` id." }),
  deposit_request_id: Schema.String,
  kind: Schema.Literal("merchant_session", "mailbox_send", "mailbox_code", "wallet").annotations({
    description:
      "`merchant_session`: the secret exchanged; `mailbox_send`: a code sent; `mailbox_code`: a code entered; `wallet`: a wallet statement."
  }),
  outcome: Schema.Literal("accepted", "refused"),
  reason: Schema.NullOr(Schema.String).annotations({
    description:
      "Why a refused attempt was refused (`being checked` while its check runs); null when accepted."
  }),
  wallet: Schema.NullOr(WireAddress).annotations({
    description: "The wallet of a wallet attestation, else null."
  }),
  attempted_at: WireTimestamp
}).annotations({ identifier: "VerificationAttempt" })

export const CreatedDepositRequest = Schema.Struct({
  ...DepositRequest.fields,
  merchant_session_secret: Schema.optional(Schema.String).annotations({
    description:
      "merchant_session policy only, in the creation answer only: hand it to the payer screen, which exchanges it. Only its digest is kept."
  })
}).annotations({ identifier: "CreatedDepositRequest" })

/**
 * `return_url` as the service takes it (CreateFields.ts): absolute, no credentials, https, or in the sandbox
 * http to localhost or 127.0.0.1 (the one rule the document cannot tell apart by environment). The scheme in any
 * case, as the URL parser reads it.
 */
const RETURN_URL_PATTERN =
  "^([hH][tT][tT][pP][sS]://[^/?#@\\s]+|[hH][tT][tT][pP]://([lL][oO][cC][aA][lL][hH][oO][sS][tT]|127\\.0\\.0\\.1)(:\\d+)?)([/?#]\\S*)?$"

export const CreateDepositRequest = withExample(
  StrictStruct({
    amount: Amount,
    heading: Schema.optional(Text.pipe(Schema.maxLength(200))),
    reference: Schema.optional(Text.pipe(Schema.maxLength(200))),
    metadata: Schema.optional(Metadata),
    customer_id: Schema.optional(Id("cus")),
    issuer_id: Id("iss"),
    payout_address_id: Id("pa"),
    // Absent means `none`, applied by the service: a default in the schema turns the whole payload into a
    // transformation, which makes its decoding much dearer (decision 0014).
    payer_policy_mode: Schema.optional(PayerPolicyMode),
    expected_email: Schema.optional(Text.pipe(Schema.pattern(/^[^\s@]{1,64}@[^\s@]{1,255}$/))),
    payer_reference: Schema.optional(Text.pipe(Schema.maxLength(200))),
    expires_at: Schema.optional(Timestamp),
    // Its rules (absolute https, the sandbox's local shops) are checked by the service, as `param: "return_url"`.
    return_url: Schema.optional(
      Schema.String.annotations({
        description:
          "Optional. Where the hosted checkout links the payer back to your shop: an absolute `https://` URL of at most 2,048 characters (the sandbox also takes `http://localhost…` and `http://127.0.0.1…`). Followed by the payer's browser, never fetched by the service. Create-only: it cannot change later, and a replay must repeat it.",
        jsonSchema: { maxLength: 2048, pattern: RETURN_URL_PATTERN, format: "uri" }
      })
    )
  }).annotations({
    identifier: "CreateDepositRequest",
    // The policy's fields, as CreateFields.ts checks them: `expected_email` with `mailbox` and only then,
    // `payer_reference` only with `merchant_session`.
    jsonSchema: {
      allOf: [
        {
          if: { required: ["payer_policy_mode"], properties: { payer_policy_mode: { const: "mailbox" } } },
          // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, not a promise
          then: { required: ["expected_email"], properties: { expected_email: true } },
          else: { properties: { expected_email: false } }
        },
        {
          if: {
            required: ["payer_policy_mode"],
            properties: { payer_policy_mode: { const: "merchant_session" } }
          },
          else: { properties: { payer_reference: false } }
        }
      ]
    },
    description:
      "`issuer_id` and `payout_address_id` name your own issuer and payout address (create them first). Without `expires_at` the request expires after the default period; with it, 5 minutes to 30 days from now."
  }),
  {
    amount: "25.000000",
    heading: "Order #4711",
    reference: "order-4711",
    metadata: { order_id: "4711" },
    issuer_id: exampleId("iss"),
    payout_address_id: exampleId("pa"),
    return_url: "https://shop.example.com/orders/4711"
  }
)

/** Only these fields can change after creation; the rest are immutable and compared for idempotency. */
const Immutable = Schema.optional(
  Schema.Never.annotations({
    message: () => "cannot change after creation; create a new deposit request instead"
  })
)

export const UpdateDepositRequest = withExample(
  StrictStruct({
    amount: Immutable,
    issuer_id: Immutable,
    payout_address_id: Immutable,
    payer_policy_mode: Immutable,
    expected_email: Immutable,
    payer_reference: Immutable,
    expires_at: Immutable,
    return_url: Immutable,
    heading: Schema.optional(Schema.NullOr(Text.pipe(Schema.maxLength(200)))),
    reference: Schema.optional(Schema.NullOr(Text.pipe(Schema.maxLength(200)))),
    metadata: Schema.optional(Schema.NullOr(Metadata)),
    customer_id: Schema.optional(Schema.NullOr(Id("cus")))
  }).annotations({ identifier: "UpdateDepositRequest" }),
  {
    heading: "Order #4711 (2 items)",
    metadata: { order_id: "4711", channel: "web" }
  }
)

/** A resume's optional body: empty (or absent) for a plain resume. */
export const ResumeDepositRequest = withExample(
  StrictStruct({
    payout_address_id: Schema.optional(
      Id("pa").annotations({
        description:
          "Only when `attention.code` is `payout_address_blocked`: another enabled payout address of your account. The settlement is commanded anew to it (a new transfer, never the held one), the request keeps it from now on, and the blocked payout address is disabled with `disabled_reason: blocked_by_token`."
      })
    )
  }).annotations({
    identifier: "ResumeDepositRequest",
    description: "Optional. Without a body (or with `{}`) the request resumes as it was."
  }),
  { payout_address_id: exampleId("pa") }
)

/** A cancel's optional body: the merchant's reason, kept on the request. */
export const CancelDepositRequest = withExample(
  StrictStruct({
    reason: Schema.optional(
      Text.pipe(Schema.maxLength(500)).annotations({
        description:
          "Why it was cancelled, in the merchant's words (up to 500 characters); shown as `cancellation.reason`."
      })
    )
  }).annotations({
    identifier: "CancelDepositRequest",
    description: "Optional. Without a body (or with `{}`) the request is cancelled without a reason."
  }),
  { reason: "The customer changed the order." }
)

export const IdempotencyKeyHeader = Schema.Struct({
  "idempotency-key": Schema.String.pipe(
    // A header arrives as bytes, one character each (latin1), so its length is its byte count on the wire.
    Schema.filter((s) => (s.length >= 1 && s.length <= 255) || "must be 1 to 255 bytes")
  ).annotations({
    description: "Required. 1 to 255 bytes, unique per create you mean; kept 24 hours.",
    examples: ["order-4711-2e7c9a4b"],
    jsonSchema: { minLength: 1, maxLength: 255 }
  })
})

const idPath = Schema.Struct({ id: IdParam("dr") })

const LONG_POLL_TIMEOUT_DEFAULT = 25
export const LongPollTimeout = Schema.optionalWith(
  DecimalInteger(1, 30, "Seconds to hold the request, 1 to 30 (default 25)."),
  { default: () => LONG_POLL_TIMEOUT_DEFAULT }
)

/**
 * A list bound on `created_at`: any RFC 3339 instant, as browsers and clients write one (fractional seconds, `Z` or
 * an offset), compared as the instant it names (infra/decisions/0080-one-search-and-local-dates.md).
 */
const CreatedBound = (meaning: string) =>
  Schema.transformOrFail(
    Schema.String.annotations({
      description: `${meaning} An RFC 3339 timestamp with seconds and a zone: \`Z\` or an offset (escape \`+\` as \`%2B\`), fractional seconds allowed; compared as the instant it names, so a local midnight is sent with its offset.`,
      examples: ["2026-11-22T12:00:00Z", "2026-11-22T08:00:00.000Z", "2026-11-22T00:00:00-08:00"],
      jsonSchema: { type: "string", pattern: rfc3339Pattern(true) }
    }),
    Schema.DateFromSelf,
    {
      strict: true,
      decode: (s, _, ast) => {
        const date = parseInstant(s)
        return date === undefined
          ? ParseResult.fail(new ParseResult.Type(ast, s, NOT_AN_INSTANT))
          : ParseResult.succeed(date)
      },
      encode: (d) => ParseResult.succeed(d.toISOString())
    }
  )

/** The list's one search box: what it recognises is in the description, and in ListSearch. */
const SearchParam = Text.pipe(
  Schema.minLength(1),
  Schema.maxLength(200),
  Schema.filter(
    (q) => {
      const found = recogniseSearch(q)
      return typeof found === "string" ? found : true
    },
    { jsonSchema: { not: { pattern: UNSEARCHABLE_ID_PATTERN } } }
  )
).annotations({
  description: [
    "One search, recognised by its form, and combined with the other filters by `and`:",
    "an id of a request (`dr_`), of its customer (`cus_`), issuer (`iss_`), payout address (`pa_`), one of its attachments (`att_`), verification attempts (`va_`), events (`evt_`) or webhook deliveries (`whd_`) (any case; other prefixes are refused);",
    "`0x` and 64 hex digits: a transaction hash of a payment in, a settlement or a return out (any case);",
    "`0x` and 40 hex digits: an address, the request's deposit address, its bound payer wallet or its payout address (by the address rule: one case, or mixed case matching the EIP-55 checksum);",
    "text with an `@`: the expected email or the customer's email (case-insensitive), or a reference;",
    "anything else: a `reference`, exactly (case-sensitive)."
  ].join(" "),
  examples: ["order-4711", "payer@example.com"]
})

const AddressParam = (meaning: string) =>
  Address.annotations({
    description: `${meaning} All lower case, all upper case or EIP-55 checksummed (a mixed-case address with a wrong checksum is refused); compared canonically.`
  })

/** The list's filters: all optional, combined with `and`. */
export const DepositRequestListParams = Schema.Struct({
  status: Schema.optional(DepositRequestStatus),
  created_gte: Schema.optional(CreatedBound("Only requests created at or after this instant.")),
  created_lt: Schema.optional(CreatedBound("Only requests created before this instant.")),
  q: Schema.optional(SearchParam),
  reference: Schema.optional(
    Text.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
      description: "Only requests whose `reference` is exactly this (case-sensitive)."
    })
  ),
  customer: Schema.optional(
    Id("cus").annotations({ description: "Only requests of this customer (`cus_` id)." })
  ),
  deposit_address: Schema.optional(AddressParam("Only the request with this one-time deposit address.")),
  payer_wallet: Schema.optional(AddressParam("Only requests whose attested payer wallet is this one.")),
  transaction_hash: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^0x[0-9a-fA-F]{64}$/, {
        message: () => "must be a 0x transaction hash of 64 hex digits"
      })
    ).annotations({
      description:
        "Only the request with a transfer (a payment in, a settlement or return out) or a recovery in this transaction; any case."
    })
  ),
  limit: Limit,
  starting_after: Schema.optional(Id("dr")),
  wait_for: Schema.optional(Schema.Literal("change")).annotations({
    description:
      "`change`: a live list. Answers at once when the page's `version` differs from `version`; otherwise holds the request until a request on the page changes (or, on a first page, one is created in the account) and answers the fresh page, or answers it at the timeout."
  }),
  version: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[A-Za-z0-9_-]{16}$/, { message: () => "must be a list page's version" })
    )
  ).annotations({
    description: "The page `version` the client already has (required with wait_for=change)."
  }),
  // Optional without a default in the schema, so a typed client's plain list names no timeout.
  timeout: Schema.optional(DecimalInteger(1, 30, "Seconds to hold a live list, 1 to 30 (default 25)."))
})

/** The hold of a live list when the client names none. */
export const listTimeoutOrDefault = (timeout: number | undefined) => timeout ?? LONG_POLL_TIMEOUT_DEFAULT

/** A list page of deposit requests, with the page's version for live lists. */
export const DepositRequestList = Schema.Struct({
  ...ListOf("deposit_requests", DepositRequest).fields,
  version: Schema.String.annotations({
    description:
      "Opaque (16 characters): a digest of the page's request ids and versions, so it changes when any request on the page changes or the page gains or loses one. Pass it back with `wait_for=change`."
  })
}).annotations({ identifier: "DepositRequestList" })

/** One webhook delivery attempt of a request's events (any of the account's endpoints). */
export const DepositRequestDeliveryParams = Schema.Struct({
  limit: Limit,
  starting_after: Schema.optional(Id("whd"))
})

/** Long polling on a read: hold the answer until the version changes, up to `timeout` seconds. */
export const LongPollParams = Schema.Struct({
  wait_for: Schema.optional(Schema.Literal("change")).annotations({
    description: "`change`: answer when the resource's `version` differs from `version`, or at the timeout."
  }),
  // Digits as written, no leading zero: a version is compared as text with the current one.
  version: Schema.optional(Schema.String.pipe(Schema.pattern(/^(0|[1-9]\d{0,19})$/))).annotations({
    description: "The `version` the client already has (required with wait_for=change)."
  }),
  timeout: LongPollTimeout
})

export class DepositRequestsApi extends HttpApiGroup.make("depositRequests")
  .add(
    HttpApiEndpoint.post("create", "/deposit-requests")
      .setHeaders(IdempotencyKeyHeader)
      .setPayload(CreateDepositRequest)
      .addSuccess(CreatedDepositRequest, { status: 201 })
      .addSuccess(
        CreatedDepositRequest.annotations({
          description: "A replay: the original resource (`Idempotency-Replayed: true`)."
        })
      )
      .addError(IdempotencyConflict)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Create a deposit request")
  )
  .add(
    HttpApiEndpoint.get("list", "/deposit-requests")
      .setUrlParams(DepositRequestListParams)
      .addSuccess(DepositRequestList)
      .annotate(OpenApi.Summary, "List deposit requests, newest first")
      .annotate(
        OpenApi.Description,
        "Filters are optional and combine with `and`, and with the `starting_after` cursor. Another account's requests are never listed. With `wait_for=change` the list is live: see `wait_for`."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/deposit-requests/:id")
      .setPath(idPath)
      .setUrlParams(LongPollParams)
      .addSuccess(DepositRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read a deposit request")
  )
  .add(
    HttpApiEndpoint.patch("update", "/deposit-requests/:id")
      .setPath(idPath)
      .setPayload(UpdateDepositRequest)
      .addSuccess(DepositRequest)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Update the mutable fields of a deposit request")
  )
  .add(
    HttpApiEndpoint.post("resume", "/deposit-requests/:id/resume")
      .setPath(idPath)
      .setPayload(ResumeDepositRequest)
      .addSuccess(DepositRequest)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(IdentityUnauthorized)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Resume a request that needs attention (dashboard session only)")
      .annotate(
        OpenApi.Description,
        "After the cause in `attention.resolution` is dealt with: automatic movement resumes for this request and whatever was outstanding is carried out again. The body is optional: with `payout_address_id`, a request paused with `payout_address_blocked` settles to that payout address instead (the only way a request's money goes elsewhere; recorded in its step history). API keys are refused (401 `identity_unauthorized`)."
      )
      // The body is optional: an absent one reads as `{}` (the edge primes it), which is a plain resume.
      .annotate(OpenApi.Transform, (operation) => ({
        ...operation,
        requestBody: { ...operation.requestBody, required: false }
      }))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/deposit-requests/:id/cancel")
      .setPath(idPath)
      .setPayload(CancelDepositRequest)
      .addSuccess(DepositRequest)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Cancel a request nobody has paid")
      .annotate(
        OpenApi.Description,
        "For a request `awaiting_payer`, or `ready` with nothing received: it becomes `expired` at once (a `deposit_request.expired` event follows, as at its deadline) and keeps the reason in `cancellation`. A transfer that arrives later is returned to the payer, as for any expired request. Once anything has arrived, or the request has ended, `409 invalid_state`. Cancelling a request already cancelled answers it as it is."
      )
      // The body is optional: an absent one reads as `{}` (the edge primes it), a cancel without a reason.
      .annotate(OpenApi.Transform, (operation) => ({
        ...operation,
        requestBody: { ...operation.requestBody, required: false }
      }))
  )
  .add(
    HttpApiEndpoint.get("transfers", "/deposit-requests/:id/transfers")
      .setPath(idPath)
      .addSuccess(ListOf("transfers", Transfer))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List the on-chain transfers of a deposit request, oldest first (one page)")
  )
  .add(
    HttpApiEndpoint.get("recoveries", "/deposit-requests/:id/recoveries")
      .setPath(idPath)
      .addSuccess(ListOf("recoveries", Recovery))
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "List the recovery ledger entries of a deposit request, oldest first (one page)"
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/deposit-requests/:id/deliveries")
      .setPath(idPath)
      .setUrlParams(DepositRequestDeliveryParams)
      .addSuccess(ListOf("deliveries", WebhookDelivery))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The webhook delivery attempts of a request's events, newest first")
      .annotate(
        OpenApi.Description,
        "Every attempt to deliver any event of this request to any of the account's endpoints (`webhook_id` names the endpoint, `event_id` and `event_type` the event)."
      )
  )
  .add(
    HttpApiEndpoint.get("verificationAttempts", "/deposit-requests/:id/verification-attempts")
      .setPath(idPath)
      .setUrlParams(Schema.Struct({ limit: Limit, starting_after: Schema.optional(Id("va")) }))
      .addSuccess(ListOf("verification_attempts", VerificationAttempt))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List the payer's proof attempts on a deposit request, newest first")
      .annotate(
        OpenApi.Description,
        "Every merchant-session exchange, mailbox send, mailbox code and wallet attestation the payer tried, with its outcome and, when refused, why. Codes, secrets and their digests are never shown."
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Deposit requests: ask a payer for an exact USDC amount.") {}
