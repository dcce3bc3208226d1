import { HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import {
  type ApiError,
  headersOf,
  InternalError,
  InvalidRequest,
  isApiError,
  MethodNotAllowed,
  NotFound,
  RouteNotFound,
  statusOf
} from "../api/Errors"
import type { RouteMatch } from "./Routes"

/** The wire form of every error: `{ "error": { "code", "message", "param"? }, "request_id" }`. */
export const errorBody = (error: ApiError, requestId: string) => ({
  error: {
    code: error.code,
    message: error.message,
    ...(error._tag === "InvalidRequest" && error.param !== undefined ? { param: error.param } : {})
  },
  request_id: requestId
})

export const renderError = (error: ApiError, requestId: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(errorBody(error, requestId), {
    status: statusOf(error),
    headers: headersOf(error)
  })

type IssuePath = ReadonlyArray<PropertyKey>

const describeIssue = (issue: {
  readonly path: IssuePath
  readonly message: string
  readonly _tag: string
}) => {
  const param = issue.path.map(String).join(".")
  const message =
    issue._tag === "Unexpected"
      ? `unknown field${param === "" ? "" : ` '${param}'`}`
      : issue._tag === "Missing"
        ? `missing required field '${param}'`
        : `${param === "" ? "body" : `'${param}'`}: ${issue.message}`
  return { param, message }
}

/** A schema decode failure names the first offending field. */
export const fromDecodeError = (error: HttpApiError.HttpApiDecodeError): InvalidRequest => {
  const first = error.issues[0]
  if (first === undefined) return new InvalidRequest({ message: error.message })
  const { param, message } = describeIssue(first)
  return new InvalidRequest(param === "" ? { message } : { message, param })
}

export type RouteLookup = (method: string, path: string) => RouteMatch

/**
 * Turns whatever a request ended with into one of the table's errors: typed API errors as they are, schema and
 * JSON failures as `invalid_request`, unmatched routes as 404/405, and anything else as a logged 500.
 */
export const classifyCause = (
  cause: Cause.Cause<unknown>,
  methodsForPath: RouteLookup,
  method: string,
  path: string
): { readonly error: ApiError; readonly unexpected: boolean } => {
  const failure = Cause.failureOption(cause)
  const squashed = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (isApiError(squashed)) return { error: squashed, unexpected: false }
  if (squashed instanceof HttpApiError.HttpApiDecodeError)
    return { error: fromDecodeError(squashed), unexpected: false }
  if (HttpServerError.isServerError(squashed)) {
    if (squashed._tag === "RouteNotFound") {
      const { allow, resource } = methodsForPath(method, path)
      // A pattern of this very method matched, so the router refused the id itself (undecodable, too long).
      if (resource !== undefined) return { error: NotFound.of(resource), unexpected: false }
      return allow.length > 0
        ? {
            error: new MethodNotAllowed({ message: `${method} is not allowed on ${path}.`, allow }),
            unexpected: false
          }
        : { error: new RouteNotFound({ message: `No route for ${method} ${path}.` }), unexpected: false }
    }
    if (squashed._tag === "RequestError" && squashed.reason === "Decode") {
      return {
        error: new InvalidRequest({ message: "The body is not valid JSON.", param: "body" }),
        unexpected: false
      }
    }
  }
  return {
    error: new InternalError({
      message: "An unexpected error occurred. Quote the request id when reporting it."
    }),
    unexpected: true
  }
}

export const logUnexpected = (cause: Cause.Cause<unknown>, requestId: string) =>
  Effect.logError("unexpected failure", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
