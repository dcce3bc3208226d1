import { HttpServerResponse } from "@effect/platform"
import { Cause, Effect } from "effect"
import { type ApiError, headersOf, InternalError, ServiceUnavailable, statusOf } from "../Errors"
import { isDatabaseUnavailable } from "../../../services/platform/SqlFailure"

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
