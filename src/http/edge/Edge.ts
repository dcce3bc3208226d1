import {
  HttpApiBuilder,
  type HttpApp,
  type HttpRouter,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Cause, Context, Effect, Exit } from "effect"
import { Api } from "../Api"
import { InvalidRequest, PayloadTooLarge } from "../Errors"
import { hasForbiddenControl } from "../../../services/domain/Text"
import { ApiSettings } from "../middleware/ApiSettings"
import { Metrics } from "../../../services/platform/Metrics"
import { answerPolicyHeaders, NO_STORE } from "../middleware/AnswerPolicy"
import { AnswerHeaders } from "../middleware/Authentication"
import { primeBody } from "../middleware/PlatformAdapter"
import { bodyLimitFor, readBody } from "../middleware/BodyLimit"
import { OBJECT_PATHS } from "../ObjectRoutes"
import { checkJsonBody, checkQuery, isJsonContentType } from "../middleware/JsonBody"
import { corsHeaders, preflightHeaders, routeKind } from "../middleware/Cors"
import { DOCS_PATH, makeDocsPolicy } from "../middleware/DocsPolicy"
import { logUnexpected, renderError } from "../middleware/ErrorBody"
import { classifyCause } from "./ErrorEnvelope"
import { resolveRequestId } from "../middleware/RequestId"
import { makeRouteLookup } from "../middleware/Routes"

const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * The answer with the edge's own headers. One `setHeader` each rather than `setHeaders` with a merged record:
 * `setHeaders` merges with two spreads, and properties added to a spread object are slow (decision 0023).
 */
const withEdgeHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  policy: Readonly<Record<string, string>>,
  cors: Readonly<Record<string, string>>,
  answer: Readonly<Record<string, string>>,
  requestId: string
): HttpServerResponse.HttpServerResponse => {
  let out = HttpServerResponse.setHeader(response, "x-request-id", requestId)
  for (const key in policy) out = HttpServerResponse.setHeader(out, key, policy[key]!)
  if (response.headers["cache-control"] === undefined)
    out = HttpServerResponse.setHeader(out, "cache-control", NO_STORE)
  for (const key in cors) out = HttpServerResponse.setHeader(out, key, cors[key]!)
  for (const key in answer) out = HttpServerResponse.setHeader(out, key, answer[key]!)
  return out
}

/**
 * The HTTP contract every route gets for free: request ids, CORS by route kind, body limits counted while
 * reading, JSON content type, header hygiene, and the one error envelope for every failure, including the
 * framework's own decode failures, unknown routes and defects.
 */
export const EdgeLive = HttpApiBuilder.middleware(
  Api,
  Effect.gen(function* () {
    const config = yield* ApiSettings
    const policy = answerPolicyHeaders(config.httpsOnly)
    const metrics = yield* Metrics
    const methodsForPath = makeRouteLookup(Api, [
      ["GET", "/openapi.json"],
      ["GET", DOCS_PATH]
    ])
    const withDocsPolicy = makeDocsPolicy()
    // The metrics label of a request's route, remembered by its path with ids as `:id`: matching every route's
    // pattern on every request would be work on the hot path. Bounded, since odd paths make keys of their own.
    const routeLabels = new Map<string, string>()
    const routeLabel = (method: string, path: string) => {
      const key = `${method} ${path.replace(/\/[a-z]{2,4}_[0-9a-f-]{36}(?=\/|$)/g, "/:id")}`
      let label = routeLabels.get(key)
      if (label === undefined) {
        label = methodsForPath(method, path).template ?? "unmatched"
        if (routeLabels.size >= 1000) routeLabels.clear()
        routeLabels.set(key, label)
      }
      return label
    }
    const checkAndPrime = (
      request: HttpServerRequest.HttpServerRequest,
      method: string,
      path: string,
      query: string,
      app: HttpApp.Default
    ) =>
      Effect.gen(function* () {
        const idempotencyKey = request.headers["idempotency-key"]
        if (idempotencyKey !== undefined && hasForbiddenControl(idempotencyKey)) {
          return yield* new InvalidRequest({
            message: "The Idempotency-Key header must not contain control characters.",
            param: "Idempotency-Key"
          })
        }
        if (query !== "") {
          const problem = checkQuery(query)
          if (problem !== undefined) return yield* new InvalidRequest(problem)
        }
        if (bodyMethods.has(method)) {
          const limit = bodyLimitFor(path)
          const lengthHeader = request.headers["content-length"]
          const declared = lengthHeader === undefined ? undefined : Number(lengthHeader)
          if (declared !== undefined && declared > limit) {
            return yield* new PayloadTooLarge({
              message: `The body is larger than this route's ${limit / 1024} KiB limit.`
            })
          }
          const contentType = request.headers["content-type"]
          const hasBody =
            (declared !== undefined && declared > 0) || request.headers["transfer-encoding"] !== undefined
          // Any declared type must be JSON, body or not: the framework picks its body reader by this header, and
          // a reader for another type would wait on a stream we have already consumed.
          if (
            (hasBody || contentType !== undefined) &&
            (contentType === undefined || !isJsonContentType(contentType))
          ) {
            return yield* new InvalidRequest({
              message: "Send the body as JSON with Content-Type: application/json.",
              param: "Content-Type"
            })
          }
          if (hasBody) {
            const read = yield* readBody(NodeHttpServerRequest.toIncomingMessage(request), limit)
            if (read._tag === "Aborted") return yield* Effect.interrupt
            if (read._tag === "TooLarge") {
              return yield* new PayloadTooLarge({
                message: `The body is larger than this route's ${limit / 1024} KiB limit.`
              })
            }
            if (read._tag === "NotUtf8") {
              return yield* new InvalidRequest({ message: "The body is not valid UTF-8.", param: "body" })
            }
            const problem = checkJsonBody(read.text)
            if (problem !== undefined) return yield* new InvalidRequest(problem)
            primeBody(request, read.text)
          } else if (method === "PATCH") {
            return yield* new InvalidRequest({
              message: "A PATCH needs a JSON object body naming the fields to change.",
              param: "body"
            })
          } else {
            // An absent body reads as an empty object, so body-less actions work and required fields are named.
            primeBody(request, "{}")
          }
        }
        return yield* app
      })

    return (app: HttpApp.Default): HttpApp.Default<never, HttpRouter.HttpRouter.Provided> =>
      Effect.withFiberRuntime((fiber) => {
        const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
        const requestId = resolveRequestId(request.headers["x-request-id"])
        const method = request.method
        const queryAt = request.url.indexOf("?")
        const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt)
        const origin = request.headers.origin

        const preflightMethod = request.headers["access-control-request-method"]
        if (method === "OPTIONS" && preflightMethod !== undefined) {
          return Effect.succeed(
            HttpServerResponse.empty({
              status: 204,
              headers: {
                ...preflightHeaders(path, preflightMethod, origin, config),
                ...policy,
                "x-request-id": requestId
              }
            })
          )
        }

        // The common case (a GET without an Idempotency-Key) goes straight to the router.
        const query = queryAt === -1 ? "" : request.url.slice(queryAt + 1)
        // The request id rides with the answer's headers, where a handler that records it (the audit log) reads it.
        const answerHeaders: Record<string, string> = { "x-request-id": requestId }
        const handled = Effect.provideService(
          // Object uploads and downloads carry bytes, not JSON: their routes read (and limit) bodies themselves.
          (bodyMethods.has(method) || query !== "" || request.headers["idempotency-key"] !== undefined) &&
            !path.startsWith(OBJECT_PATHS)
            ? checkAndPrime(request, method, path, query, app)
            : app,
          AnswerHeaders,
          answerHeaders
        )

        const started = performance.now()
        // By route template, so the label has one value per route (a parked long poll counts until it parks).
        const observed = (response: HttpServerResponse.HttpServerResponse) => {
          metrics.http.observe(
            { method, route: routeLabel(method, path), status: response.status },
            (performance.now() - started) / 1000
          )
          return response
        }
        return Effect.flatMap(Effect.exit(handled), (exit) => {
          const cors = corsHeaders(routeKind(path, method), origin, config)
          if (Exit.isSuccess(exit)) {
            const answer = path === DOCS_PATH ? withDocsPolicy(exit.value) : exit.value
            return Effect.succeed(observed(withEdgeHeaders(answer, policy, cors, answerHeaders, requestId)))
          }
          const { error, unexpected } = classifyCause(exit.cause, methodsForPath, method, path)
          const rendered = observed(
            withEdgeHeaders(
              renderError(error, requestId, config.publicBaseUrl),
              policy,
              cors,
              answerHeaders,
              requestId
            )
          )
          // A client that went away interrupts its handler (a listener's held poll, say): nothing went wrong.
          return unexpected && !Cause.isInterruptedOnly(exit.cause)
            ? Effect.as(logUnexpected(exit.cause, requestId), rendered)
            : Effect.succeed(rendered)
        })
      })
  })
)
