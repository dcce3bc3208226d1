import { HttpServerResponse } from "@effect/platform"
import { Cause, Effect } from "effect"
import { type ApiError, docUrlOf, headersOf, InternalError, ServiceUnavailable, statusOf } from "../Errors"
import { isDatabaseUnavailable } from "../../../services/platform/SqlFailure"

/**
 * The wire form of every error: `{ "error": { "code", "message", "param"?, "doc_url" }, "request_id" }`. `doc_url`
 * is the code's line on the service's errors page under `base` (`PUBLIC_BASE_URL`), as Stripe's errors carry one
 * (decision 0087).
 */
export const errorBody = (error: ApiError, requestId: string, base: string) => ({
  error: {
    code: error.code,
    message: error.message,
    ...(error._tag === "InvalidRequest" && error.param !== undefined ? { param: error.param } : {}),
    doc_url: docUrlOf(base, error.code)
  },
  request_id: requestId
})

export const renderError = (
  error: ApiError,
  requestId: string,
  base: string
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(errorBody(error, requestId, base), {
    status: statusOf(error),
    headers: headersOf(error)
  })

/**
 * What an unexpected failure is answered with: the database away (killed, restarting, unreachable) is a 503 the
 * client may retry shortly, anything else a 500. Logged all the same.
 */
export const unexpectedError = (cause: Cause.Cause<unknown>): ApiError =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some(isDatabaseUnavailable)
    ? databaseAway
    : new InternalError({
        message: "An unexpected error occurred. Quote the request id when reporting it."
      })

const databaseAway = new ServiceUnavailable({
  message: "The service cannot reach its database right now; retry shortly."
})

export const logUnexpected = (cause: Cause.Cause<unknown>, requestId: string) =>
  Effect.logError("unexpected failure", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
