import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import {
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthenticated
} from "../Errors"
import { Address } from "../../../services/domain/Address"
import { Id, type IdPrefix } from "../../../services/domain/PrefixedId"
import { IdParam, Limit, ListOf, Metadata, StrictStruct, withExample } from "../Schemas"
import { Text } from "../../../services/domain/Text"

const Email = Text.pipe(
  Schema.pattern(/^[^\s@]{1,64}@[^\s@]{1,255}$/, {
    message: () => "must be an email address, such as ops@example.com"
  })
).annotations({
  description: "An email address."
})
const HttpsUrl = Text.pipe(
  Schema.maxLength(2048),
  Schema.pattern(/^https:\/\/[^\s]+$/, {
    message: () => "must be an https:// URL, such as https://example.com/help"
  })
).annotations({
  description: "An https:// URL."
})
const Timestamp = Schema.String.annotations({ description: "RFC 3339 UTC, second precision, Z." })
const Nullable = <S extends Schema.Schema.Any>(s: S) => Schema.optional(Schema.NullOr(s))

export const Customer = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Customer" })

export const Issuer = Schema.Struct({
  id: Schema.String,
  display_name: Schema.String,
  legal_name: Schema.NullOr(Schema.String),
  support_email: Schema.NullOr(Schema.String),
  support_url: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({
  identifier: "Issuer",
  description: "The identity payers see: who is asking for the payment."
})

export const PayoutAddress = Schema.Struct({
  id: Schema.String,
  address: Schema.String,
  label: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  created_at: Timestamp,
  updated_at: Timestamp,
  disabled_at: Schema.NullOr(Timestamp),
  disabled_reason: Schema.NullOr(Schema.String).annotations({
    description:
      "Why it was disabled other than by `disable`: `blocked_by_token` when USDC's issuer blacklisted the address and a request was resumed to another payout address; `hold_cancelled` when a member cancelled it during its hold. Null while enabled and when you disabled it yourself."
  }),
  held_until: Schema.NullOr(Timestamp).annotations({
    description:
      "When its hold ends: a new payout address takes no deposit request (a create or a resume naming it answers 409 `invalid_state`) until then, `PAYOUT_ADDRESS_HOLD_SECONDS` after it was added (a day in production, none in the sandbox), and any member may cancel it until then. Stays as it was once past. Null when it was added without a hold."
  })
}).annotations({
  identifier: "PayoutAddress",
  description: "Where settlements send exactly the requested amount."
})

const Name = Text.pipe(Schema.minLength(1), Schema.maxLength(200))
const DisplayName = Text.pipe(Schema.minLength(1), Schema.maxLength(100))
const Label = Text.pipe(Schema.maxLength(200))
const Description = Text.pipe(Schema.maxLength(1000))

export const CreateCustomer = withExample(
  StrictStruct({
    name: Name,
    email: Schema.optional(Email),
    description: Schema.optional(Description),
    metadata: Schema.optional(Metadata)
  }).annotations({ identifier: "CreateCustomer" }),
  {
    name: "Ada Lovelace",
    email: "ada@example.com",
    description: "Wholesale buyer",
    metadata: { crm_id: "C-1001" }
  }
)
export const UpdateCustomer = withExample(
  StrictStruct({
    name: Schema.optional(Name),
    email: Nullable(Email),
    description: Nullable(Description),
    metadata: Nullable(Metadata)
  }).annotations({ identifier: "UpdateCustomer" }),
  { email: "ada@example.org", description: null }
)

export const CreateIssuer = withExample(
  StrictStruct({
    display_name: DisplayName,
    legal_name: Schema.optional(Name),
    support_email: Schema.optional(Email),
    support_url: Schema.optional(HttpsUrl),
    metadata: Schema.optional(Metadata)
  }).annotations({ identifier: "CreateIssuer" }),
  {
    display_name: "Acme Store",
    legal_name: "Acme Store Ltd.",
    support_email: "support@acme.example",
    support_url: "https://acme.example/help"
  }
)
export const UpdateIssuer = withExample(
  StrictStruct({
    display_name: Schema.optional(DisplayName),
    legal_name: Nullable(Name),
    support_email: Nullable(Email),
    support_url: Nullable(HttpsUrl),
    metadata: Nullable(Metadata)
  }).annotations({ identifier: "UpdateIssuer" }),
  { support_url: "https://acme.example/support" }
)

// All digits, so it has no other spelling for the refusal to miss.
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
const NonZeroAddress = Address.pipe(
  Schema.filter((a) => a !== ZERO_ADDRESS || "must not be the zero address", {
    jsonSchema: { not: { const: ZERO_ADDRESS } }
  })
)
export const CreatePayoutAddress = withExample(
  StrictStruct({
    address: NonZeroAddress,
    label: Schema.optional(Label),
    metadata: Schema.optional(Metadata)
  }).annotations({ identifier: "CreatePayoutAddress" }),
  {
    address: "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
    label: "Treasury"
  }
)
export const UpdatePayoutAddress = withExample(
  StrictStruct({
    address: Schema.optional(
      Schema.Never.annotations({
        message: () => "cannot change; add a new payout address and disable this one"
      })
    ),
    label: Nullable(Label),
    metadata: Nullable(Metadata)
  }).annotations({ identifier: "UpdatePayoutAddress" }),
  { label: "Main treasury" }
)

/** Create, list, read and update: the shape every merchant record shares. */
const recordEndpoints = <
  const Name extends string,
  const Plural extends string,
  W extends Schema.Schema.Any,
  C extends Schema.Schema.Any,
  U extends Schema.Schema.Any
>(o: {
  readonly name: Name
  readonly path: `/${string}`
  readonly plural: Plural
  readonly prefix: IdPrefix
  readonly noun: string
  readonly wire: W
  readonly create: C
  readonly update: U
}) =>
  HttpApiGroup.make(o.name)
    .add(
      HttpApiEndpoint.post("create", o.path)
        .setPayload(o.create)
        .addSuccess(o.wire, { status: 201 })
        .addError(PayloadTooLarge)
        .annotate(OpenApi.Summary, `Create a ${o.noun}`)
    )
    .add(
      HttpApiEndpoint.get("list", o.path)
        .setUrlParams(Schema.Struct({ limit: Limit, starting_after: Schema.optional(Id(o.prefix)) }))
        .addSuccess(ListOf(o.plural, o.wire))
        .annotate(OpenApi.Summary, `List ${o.noun}s, newest first`)
    )
    .add(
      HttpApiEndpoint.get("get", `${o.path}/:id`)
        .setPath(Schema.Struct({ id: IdParam(o.prefix) }))
        .addSuccess(o.wire)
        .addError(NotFound)
        .annotate(OpenApi.Summary, `Read a ${o.noun}`)
    )
    .add(
      HttpApiEndpoint.patch("update", `${o.path}/:id`)
        .setPath(Schema.Struct({ id: IdParam(o.prefix) }))
        .setPayload(o.update)
        .addSuccess(o.wire)
        .addError(NotFound)
        .addError(PayloadTooLarge)
        .annotate(OpenApi.Summary, `Update a ${o.noun} (omitted fields stay, null clears)`)
    )
    .addError(Unauthenticated)
    .addError(RateLimited)
    .addError(InvalidRequest)
    .middleware(Authentication)

export class CustomersApi extends recordEndpoints({
  name: "customers",
  path: "/customers",
  plural: "customers",
  prefix: "cus",
  noun: "customer",
  wire: Customer,
  create: CreateCustomer,
  update: UpdateCustomer
}).add(
  HttpApiEndpoint.del("delete", "/customers/:id")
    .setPath(Schema.Struct({ id: IdParam("cus") }))
    .addSuccess(HttpApiSchema.NoContent)
    .addError(NotFound)
    .annotate(OpenApi.Summary, "Delete a customer (requests that name it keep the id)")
) {}

export class IssuersApi extends recordEndpoints({
  name: "issuers",
  path: "/issuers",
  plural: "issuers",
  prefix: "iss",
  noun: "issuer",
  wire: Issuer,
  create: CreateIssuer,
  update: UpdateIssuer
}).add(
  HttpApiEndpoint.del("delete", "/issuers/:id")
    .setPath(Schema.Struct({ id: IdParam("iss") }))
    .addSuccess(HttpApiSchema.NoContent)
    .addError(NotFound)
    .annotate(OpenApi.Summary, "Delete an issuer identity (it can no longer be used for new requests)")
) {}

export class PayoutAddressesApi extends recordEndpoints({
  name: "payoutAddresses",
  path: "/payout-addresses",
  plural: "payout_addresses",
  prefix: "pa",
  noun: "payout address",
  wire: PayoutAddress,
  create: CreatePayoutAddress,
  update: UpdatePayoutAddress
})
  .add(
    HttpApiEndpoint.post("disable", "/payout-addresses/:id/disable")
      .setPath(Schema.Struct({ id: IdParam("pa") }))
      .addSuccess(PayoutAddress)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Disable a payout address: no new request may use it; it stays readable")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/payout-addresses/:id/cancel")
      .setPath(Schema.Struct({ id: IdParam("pa") }))
      .addSuccess(PayoutAddress)
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(
        OpenApi.Summary,
        "Cancel a payout address during its hold: it is disabled before it ever receives money"
      )
      .annotate(
        OpenApi.Description,
        "Any member (a dashboard session) or the API key may cancel it while `held_until` is in the future: it is disabled with `disabled_reason` `hold_cancelled`, recorded in the audit log (`payout_address.hold_cancelled`) and every member is told. Once released, or already disabled, 409 `invalid_state`: `disable` it instead."
      )
  ) {}
