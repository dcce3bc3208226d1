import { Schema } from "effect"
import {
  DomainErrors,
  HttpsRequired,
  IdempotencyConflict,
  InvalidRequest,
  InvalidState,
  NotFound,
  RateLimited,
  SandboxOnly,
  ServiceUnavailable
} from "../../services/domain/Errors"
import {
  type ErrorRow,
  errorFacts,
  MessageError,
  type PublicErrorClass
} from "../../services/domain/PublicError"

/**
 * The errors only the HTTP edge raises (credentials, routing, transport limits, the unexpected), beside the
 * domain's, and what is derived from all of them: the status and headers of an answer, the README's table and
 * the codes the OpenAPI document lists.
 */

export class Unauthenticated extends MessageError<Unauthenticated>()("Unauthenticated", {
  status: 401,
  code: "unauthenticated",
  when: "A missing, malformed, unknown, revoked or expired credential, or a key of the other environment (always the same answer, with `WWW-Authenticate: Bearer`).",
  fix: "Send a live credential as `Authorization: Bearer …`: an API key of this environment (`service_test_` in the sandbox), or sign in to the dashboard again if the session ended.",
  headers: { "www-authenticate": 'Bearer realm="deposits"' }
}) {}

export class IdentityUnauthorized extends MessageError<IdentityUnauthorized>()("IdentityUnauthorized", {
  status: 401,
  code: "identity_unauthorized",
  when: "An API key used on key management (`/v1/account/api-key`).",
  fix: "Manage API keys with a dashboard session (sign in to the dashboard, Developers), not with an API key."
}) {}

export class RouteNotFound extends MessageError<RouteNotFound>()("RouteNotFound", {
  status: 404,
  code: "route_not_found",
  when: "No route has this path.",
  fix: "Check the method and path against the API reference; every route is under `/v1`."
}) {}

const methodNotAllowed = errorFacts({
  status: 405,
  code: "method_not_allowed",
  when: "The path exists but not with this method (`Allow` lists the methods).",
  fix: "Use one of the methods the `Allow` header lists for this path."
})
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  { message: Schema.String, allow: Schema.Array(Schema.String) },
  methodNotAllowed.annotations()
) {
  static readonly facts = methodNotAllowed
  get code() {
    return methodNotAllowed.code
  }
  /** The one header that depends on the instance. */
  get headers() {
    return { allow: this.allow.join(", ") }
  }
}

export class RequestTimeout extends MessageError<RequestTimeout>()("RequestTimeout", {
  status: 408,
  code: "request_timeout",
  when: "The request's headers or body did not arrive in time (Node's request timeouts); nothing was processed.",
  fix: "Send the whole request promptly (headers and body); retry it on a fresh connection."
}) {}

export class PayloadTooLarge extends MessageError<PayloadTooLarge>()("PayloadTooLarge", {
  status: 413,
  code: "payload_too_large",
  when: "The body is above the route's limit (64 KiB, 16 KiB or 8 KiB).",
  fix: "Send a smaller body; PDF bytes go to the presigned upload URL, never through the API."
}) {}

export class RequestHeadersTooLarge extends MessageError<RequestHeadersTooLarge>()("RequestHeadersTooLarge", {
  status: 431,
  code: "request_headers_too_large",
  when: "The request's headers are larger than the server reads (16 KiB in all); nothing was processed.",
  fix: "Send fewer or shorter headers (cookies, say): the server reads 16 KiB of headers in all."
}) {}

export class InternalError extends MessageError<InternalError>()("InternalError", {
  status: 500,
  code: "internal_error",
  when: "An unexpected failure; it is logged with the request id.",
  fix: "Retry later; if it repeats, report it quoting the `request_id`."
}) {}

export {
  HttpsRequired,
  IdempotencyConflict,
  InvalidRequest,
  InvalidState,
  NotFound,
  RateLimited,
  SandboxOnly,
  ServiceUnavailable
}

/** Every public error: the domain's and the edge's. */
export const AllErrors = [
  ...DomainErrors,
  Unauthenticated,
  IdentityUnauthorized,
  RouteNotFound,
  MethodNotAllowed,
  RequestTimeout,
  PayloadTooLarge,
  RequestHeadersTooLarge,
  InternalError
] as const

export type ApiError = InstanceType<(typeof AllErrors)[number]>

// By class, not by tag: the platform has its own errors with the same tag names (RouteNotFound).
export const isApiError = (u: unknown): u is ApiError =>
  AllErrors.some((ErrorClass) => u instanceof ErrorClass)

const classOf = (error: ApiError) => error.constructor as unknown as PublicErrorClass

/** The status an error answers with. */
export const statusOf = (error: ApiError): number => classOf(error).facts.status

/** Headers an error answer carries beside the body. */
export const headersOf = (error: ApiError): Readonly<Record<string, string>> =>
  error instanceof MethodNotAllowed || error instanceof RateLimited
    ? error.headers
    : classOf(error).facts.headers

const rowsOf = (ErrorClass: PublicErrorClass): ReadonlyArray<ErrorRow> =>
  ErrorClass.rows ?? [ErrorClass.facts]

/** The documented table, by status: status, code and when it is answered. Rendered into the README. */
export const errorTable: ReadonlyArray<ErrorRow> = AllErrors.flatMap(rowsOf).sort(
  (a, b) => a.status - b.status
)

/** The wire codes each error class can carry, by tag, for the OpenAPI document. */
export const codesOf: Readonly<Record<string, ReadonlyArray<string>>> = Object.fromEntries(
  AllErrors.map((ErrorClass) => [ErrorClass._tag, rowsOf(ErrorClass).map((row) => row.code)])
)

/** The README's error table, generated from `errorTable` (a test keeps the two equal). */
export const errorTableMarkdown = (): string =>
  [
    "| Status | Code | When |",
    "|---|---|---|",
    ...errorTable.map((e) => `| ${e.status} | \`${e.code}\` | ${e.when} |`)
  ].join("\n")

/** Where the error table is served as a page, one anchor per code (`src/web/docs/ErrorDocsRoute.ts`). */
export const ERROR_DOCS_PATH = "/docs/errors"

/** An answer's `doc_url`: the line of its code on the errors page, under `PUBLIC_BASE_URL` (`base`, no trailing slash). */
export const docUrlOf = (base: string, code: string): string => `${base}${ERROR_DOCS_PATH}#${code}`
