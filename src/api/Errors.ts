import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { idPrefixes, type ResourceName } from "./Schemas"

/**
 * The one error table. Every public error is a tagged class carrying its HTTP status and wire code; the edge
 * renders each as `{ "error": { "code", "message", "param"? }, "request_id" }`. The README's table is checked
 * against `errorTable` by a test.
 */

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()(
  "InvalidRequest",
  { message: Schema.String, param: Schema.optional(Schema.String) },
  HttpApiSchema.annotations({ status: 400 })
) {
  get code() {
    return "invalid_request" as const
  }
}

export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()(
  "Unauthenticated",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {
  get code() {
    return "unauthenticated" as const
  }
}

export class IdentityUnauthorized extends Schema.TaggedError<IdentityUnauthorized>()(
  "IdentityUnauthorized",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {
  get code() {
    return "identity_unauthorized" as const
  }
}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  {
    resource: Schema.Literal(...(Object.values(idPrefixes) as Array<ResourceName>)),
    message: Schema.String
  },
  HttpApiSchema.annotations({ status: 404 })
) {
  get code(): `${ResourceName}_not_found` {
    return `${this.resource}_not_found`
  }
  static of(resource: ResourceName) {
    return new NotFound({ resource, message: `No such ${resource.replaceAll("_", " ")}.` })
  }
}

export class RouteNotFound extends Schema.TaggedError<RouteNotFound>()(
  "RouteNotFound",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {
  get code() {
    return "route_not_found" as const
  }
}

export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  { message: Schema.String, allow: Schema.Array(Schema.String) },
  HttpApiSchema.annotations({ status: 405 })
) {
  get code() {
    return "method_not_allowed" as const
  }
}

export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()(
  "IdempotencyConflict",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  get code() {
    return "idempotency_conflict" as const
  }
}

export class IdempotencyInProgress extends Schema.TaggedError<IdempotencyInProgress>()(
  "IdempotencyInProgress",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  get code() {
    return "idempotency_in_progress" as const
  }
}

export class InvalidState extends Schema.TaggedError<InvalidState>()(
  "InvalidState",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {
  get code() {
    return "invalid_state" as const
  }
}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 413 })
) {
  get code() {
    return "payload_too_large" as const
  }
}

export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()(
  "RequestTimeout",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 408 })
) {
  get code() {
    return "request_timeout" as const
  }
}

export class RequestHeadersTooLarge extends Schema.TaggedError<RequestHeadersTooLarge>()(
  "RequestHeadersTooLarge",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 431 })
) {
  get code() {
    return "request_headers_too_large" as const
  }
}

export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 429 })
) {
  get code() {
    return "rate_limited" as const
  }
}

export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 500 })
) {
  get code() {
    return "internal_error" as const
  }
}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {
  get code() {
    return "service_unavailable" as const
  }
}

export type ApiError =
  | InvalidRequest
  | Unauthenticated
  | IdentityUnauthorized
  | NotFound
  | RouteNotFound
  | MethodNotAllowed
  | IdempotencyConflict
  | IdempotencyInProgress
  | InvalidState
  | PayloadTooLarge
  | RequestTimeout
  | RequestHeadersTooLarge
  | RateLimited
  | InternalError
  | ServiceUnavailable

// By class, not by tag: the platform has its own errors with the same tag names (RouteNotFound).
export const isApiError = (u: unknown): u is ApiError =>
  AllErrors.some((ErrorClass) => u instanceof ErrorClass)

export const statusOf: Record<ApiError["_tag"], number> = {
  InvalidRequest: 400,
  Unauthenticated: 401,
  IdentityUnauthorized: 401,
  NotFound: 404,
  RouteNotFound: 404,
  MethodNotAllowed: 405,
  IdempotencyConflict: 409,
  IdempotencyInProgress: 409,
  InvalidState: 409,
  PayloadTooLarge: 413,
  RequestTimeout: 408,
  RequestHeadersTooLarge: 431,
  RateLimited: 429,
  InternalError: 500,
  ServiceUnavailable: 503
}

/** Headers an error answer carries beside the body. */
export const headersOf = (error: ApiError): Record<string, string> => {
  switch (error._tag) {
    case "Unauthenticated":
      return { "www-authenticate": 'Bearer realm="deposits"' }
    case "MethodNotAllowed":
      return { allow: error.allow.join(", ") }
    case "RateLimited":
    case "IdempotencyInProgress":
      return { "retry-after": "1" }
    case "ServiceUnavailable":
      return { "retry-after": "5" }
    default:
      return {}
  }
}

/** The documented table: status, code and when it is answered. Rendered into the README and checked by a test. */
export const errorTable: ReadonlyArray<{
  readonly status: number
  readonly code: string
  readonly when: string
}> = [
  {
    status: 400,
    code: "invalid_request",
    when: "Malformed JSON, a missing, unknown or mistyped field, a body without a JSON content type, a C0 control character, a bare UUID or wrong-prefix id in a body or query, a bad header value. `message` and `param` name the field."
  },
  {
    status: 401,
    code: "unauthenticated",
    when: "A missing, malformed, unknown, revoked or expired credential, or a key of the other environment (always the same answer, with `WWW-Authenticate: Bearer`)."
  },
  {
    status: 401,
    code: "identity_unauthorized",
    when: "An API key used on key management (`/v1/account/api-key`)."
  },
  ...Object.values(idPrefixes).map((resource) => ({
    status: 404,
    code: `${resource}_not_found`,
    when: `The ${resource.replaceAll("_", " ")} id is missing, malformed, bare, of another prefix or of another account.`
  })),
  { status: 404, code: "route_not_found", when: "No route has this path." },
  {
    status: 405,
    code: "method_not_allowed",
    when: "The path exists but not with this method (`Allow` lists the methods)."
  },
  {
    status: 409,
    code: "idempotency_conflict",
    when: "The `Idempotency-Key` was used before with a different request body."
  },
  {
    status: 409,
    code: "idempotency_in_progress",
    when: "A request with the same `Idempotency-Key` is still being processed (`Retry-After: 1`)."
  },
  { status: 409, code: "invalid_state", when: "The action is not allowed in the resource's current status." },
  {
    status: 408,
    code: "request_timeout",
    when: "The request's headers or body did not arrive in time (Node's request timeouts); nothing was processed."
  },
  {
    status: 413,
    code: "payload_too_large",
    when: "The body is above the route's limit (64 KiB, 16 KiB or 8 KiB)."
  },
  { status: 429, code: "rate_limited", when: "The account's token bucket is empty (`Retry-After: 1`)." },
  {
    status: 431,
    code: "request_headers_too_large",
    when: "The request's headers are larger than the server reads (16 KiB in all); nothing was processed."
  },
  { status: 500, code: "internal_error", when: "An unexpected failure; it is logged with the request id." },
  {
    status: 503,
    code: "service_unavailable",
    when: "A dependency (database, bus or chain) is unreachable (`Retry-After: 5`)."
  }
]

/** Every public error, for endpoints that want the whole family documented. */
export const AllErrors = [
  InvalidRequest,
  Unauthenticated,
  IdentityUnauthorized,
  NotFound,
  RouteNotFound,
  MethodNotAllowed,
  IdempotencyConflict,
  IdempotencyInProgress,
  InvalidState,
  PayloadTooLarge,
  RequestTimeout,
  RequestHeadersTooLarge,
  RateLimited,
  InternalError,
  ServiceUnavailable
] as const

/** The README's error table, generated from `errorTable` (a test keeps the two equal). */
export const errorTableMarkdown = (): string =>
  [
    "| Status | Code | When |",
    "|---|---|---|",
    ...errorTable.map((e) => `| ${e.status} | \`${e.code}\` | ${e.when} |`)
  ].join("\n")
