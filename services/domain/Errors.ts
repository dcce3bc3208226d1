import { Schema } from "effect"
import { idPrefixes, type ResourceName } from "./PrefixedId"
import { errorFacts, MessageError } from "./PublicError"

/**
 * The errors the domain raises. Each class carries its wire code, HTTP status, headers and the one line the
 * README's table shows; the HTTP edge renders every one as `{ "error": { "code", "message", "param"? },
 * "request_id" }`.
 */

const invalidRequest = errorFacts({
  status: 400,
  code: "invalid_request",
  when: "Malformed JSON, a missing, unknown or mistyped field, a body without a JSON content type, a C0 control character, a bare UUID or wrong-prefix id in a body or query, a mixed-case address whose EIP-55 checksum is wrong (all lower or all upper case is taken; answers are checksummed), a bad header value. `message` and `param` name the field.",
  fix: "Read `message` and `param`: they name the field or header to correct. Send the body as JSON with `Content-Type: application/json`, only the documented fields, ids with their prefix. Nothing was written, so the corrected request can be sent as a new one."
})
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()(
  "InvalidRequest",
  { message: Schema.String, param: Schema.optional(Schema.String) },
  invalidRequest.annotations()
) {
  static readonly facts = invalidRequest
  get code() {
    return invalidRequest.code
  }
}

const resources = Object.values(idPrefixes) as Array<ResourceName>
const spoken = (resource: ResourceName) => resource.replaceAll("_", " ")
const prefixOf = Object.fromEntries(
  Object.entries(idPrefixes).map(([prefix, resource]) => [resource, prefix])
) as Record<ResourceName, string>

const notFound = errorFacts({
  status: 404,
  code: "<resource>_not_found",
  when: "The resource's id is missing, malformed, bare, of another prefix or of another account.",
  fix: "Check the id: it must be the full prefixed id (`dr_…`, `cus_…`) the API answered, used with a key of the account that made it."
})
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { resource: Schema.Literal(...resources), message: Schema.String },
  notFound.annotations()
) {
  static readonly facts = notFound
  /** One row per resource: the code names the resource. */
  static readonly rows = resources.map((resource) => ({
    status: notFound.status,
    code: `${resource}_not_found`,
    when: `The ${spoken(resource)} id is missing, malformed, bare, of another prefix or of another account.`,
    fix: `Use the full ${spoken(resource)} id (\`${prefixOf[resource]}_…\`) as the API answered it, with a credential of the account that made it.`
  }))
  get code(): `${ResourceName}_not_found` {
    return `${this.resource}_not_found`
  }
  static of(resource: ResourceName) {
    return new NotFound({ resource, message: `No such ${spoken(resource)}.` })
  }
}

export class IdempotencyConflict extends MessageError<IdempotencyConflict>()("IdempotencyConflict", {
  status: 409,
  code: "idempotency_conflict",
  when: "The `Idempotency-Key` was used before with a different request body.",
  fix: "Use a new `Idempotency-Key` for a different request, or resend the first request's body unchanged to get its answer again."
}) {}

export class InvalidState extends MessageError<InvalidState>()("InvalidState", {
  status: 409,
  code: "invalid_state",
  when: "The action is not allowed in the resource's current status.",
  fix: "Read the resource back (its `status`) and only ask for what that status allows; `message` says why this one is refused."
}) {}

const rateLimited = errorFacts({
  status: 429,
  code: "rate_limited",
  when: "The account's token bucket is empty (`Retry-After: 1`), or a sign-in limit per address or per client is reached (`Retry-After` says when the window lets the next attempt in).",
  fix: "Wait the seconds `Retry-After` says, then retry; spread calls out (the bucket refills one call a second) rather than retrying in a loop.",
  headers: { "retry-after": "1" }
})
export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  {
    message: Schema.String,
    /** Seconds until a retry can pass, when it is not the token bucket's one second (the sign-in limits). */
    retryAfterSeconds: Schema.optional(Schema.Int)
  },
  rateLimited.annotations()
) {
  static readonly facts = rateLimited
  get code() {
    return rateLimited.code
  }
  /** `Retry-After` depends on the instance: a sign-in limit's window ends later than the bucket's second. */
  get headers(): Readonly<Record<string, string>> {
    return this.retryAfterSeconds === undefined
      ? rateLimited.headers
      : { "retry-after": String(this.retryAfterSeconds) }
  }
}

export class HttpsRequired extends MessageError<HttpsRequired>()("HttpsRequired", {
  status: 403,
  code: "https_required",
  when: "Outside the sandbox, a sign-in route reached over plain HTTP from a client that is not on loopback (`X-Forwarded-Proto` is read only from a loopback peer, such as a proxy on the same host).",
  fix: "Reach the service over `https://` (behind a proxy, have it set `X-Forwarded-Proto: https`)."
}) {}

export class SandboxOnly extends MessageError<SandboxOnly>()("SandboxOnly", {
  status: 403,
  code: "sandbox_only",
  when: "A sandbox-only operation (webhook listeners for `deposits listen`) asked of a production service; nothing was changed.",
  fix: "Use a sandbox service (and a `service_test_` key) for this; production has no such operation."
}) {}

export class ServiceUnavailable extends MessageError<ServiceUnavailable>()("ServiceUnavailable", {
  status: 503,
  code: "service_unavailable",
  when: "A dependency (database, bus or chain) is unreachable, or the instance is shutting down (`Retry-After: 5`).",
  fix: "Retry after the seconds `Retry-After` says; idempotent retries (with the same `Idempotency-Key`) are safe. If it lasts, check the service's dependencies.",
  headers: { "retry-after": "5" }
}) {}

/** The errors services raise. */
export const DomainErrors = [
  InvalidRequest,
  NotFound,
  IdempotencyConflict,
  InvalidState,
  RateLimited,
  HttpsRequired,
  SandboxOnly,
  ServiceUnavailable
] as const
