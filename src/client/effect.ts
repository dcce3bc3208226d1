/**
 * The client for Effect users (package export `./client`): `HttpApiClient` derived from the contract itself
 * (src/http/Api.ts), so every call is typed by it, every answer decoded by its schemas and every error answer decoded
 * into its typed error (`InvalidRequest`, `NotFound`, `RateLimited`, …, matched with `Effect.catchTag`). Bearer
 * authentication and the retry policy of ./retry.ts are applied at the transport; the helpers below are what the
 * API's conventions need: an idempotent create, a cursor walk as a `Stream`, long polls.
 *
 * It needs an `HttpClient` (provide `FetchHttpClient.layer` from @effect/platform, or Node's).
 */
import { HttpApiClient, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Chunk, Effect, FiberRef, Option, Stream } from "effect"
import { Api } from "../http/Api"
import type {
  CreateDepositRequest,
  DepositRequest,
  DepositRequestListParams,
  DepositRequestStatus
} from "../http/DepositRequests/Api"
import { AllErrors, codesOf } from "../http/Errors"
import { newIdempotencyKey, type RetryOptions, retryDelayMs } from "./retry"

export {
  HttpsRequired,
  IdempotencyConflict,
  IdentityUnauthorized,
  InternalError,
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable,
  Unauthenticated
} from "../http/Errors"
export { Api } from "../http/Api"
export type { RetryOptions } from "./retry"

export interface ClientOptions {
  /** The service's origin, e.g. `https://deposits.example.com` (paths start with `/v1`). */
  readonly baseUrl: string
  /** An API key of the account: `service_test_…` in the sandbox, `service_live_…` in production. */
  readonly apiKey: string
  readonly retry?: RetryOptions
}

type CreatePayload = typeof CreateDepositRequest.Type
/** The create's body with plain string ids (the service checks them; the contract's branded ids are inside). */
export type CreateDepositRequestInput = Omit<
  CreatePayload,
  "issuer_id" | "payout_address_id" | "customer_id"
> & {
  readonly issuer_id: string
  readonly payout_address_id: string
  readonly customer_id?: string
}
export type DepositRequestView = typeof DepositRequest.Type
export type Status = typeof DepositRequestStatus.Type
export type ListFilters = Partial<
  Omit<
    typeof DepositRequestListParams.Type,
    "starting_after" | "wait_for" | "version" | "timeout" | "customer"
  >
> & { readonly customer?: string }

/** The retry policy at the transport: every call of the client gets it. */
const withRetries =
  (retry: RetryOptions) =>
  (client: HttpClient.HttpClient): HttpClient.HttpClient =>
    HttpClient.transform(client, (send, request) => {
      const hasIdempotencyKey = request.headers["idempotency-key"] !== undefined
      const attempt = (n: number): Effect.Effect<HttpClientResponse.HttpClientResponse, unknown> =>
        Effect.matchEffect(send, {
          onFailure: (error) => {
            // Only a transport failure (no answer) is a network error; others are the caller's to see.
            const noAnswer =
              typeof error === "object" && error !== null && "_tag" in error && error._tag === "RequestError"
            const delay = noAnswer
              ? retryDelayMs(
                  {
                    attempt: n,
                    method: request.method,
                    hasIdempotencyKey,
                    status: undefined,
                    retryAfter: undefined
                  },
                  retry
                )
              : undefined
            return delay === undefined
              ? Effect.fail(error)
              : Effect.zipRight(Effect.sleep(delay), attempt(n + 1))
          },
          onSuccess: (response) => {
            const delay = retryDelayMs(
              {
                attempt: n,
                method: request.method,
                hasIdempotencyKey,
                status: response.status,
                retryAfter: response.headers["retry-after"]
              },
              retry
            )
            return delay === undefined
              ? Effect.succeed(response)
              : // The refused answer's body is read and dropped, so its connection is free again.
                Effect.zipRight(
                  Effect.ignore(response.arrayBuffer),
                  Effect.zipRight(Effect.sleep(delay), attempt(n + 1))
                )
          }
        })
      return attempt(0) as typeof send
    })

/** The tag of the contract's error class that answers with `code`. */
const tagOfCode: ReadonlyMap<string, string> = new Map(
  AllErrors.flatMap((ErrorClass) =>
    (codesOf[ErrorClass._tag] ?? []).map((code) => [code, ErrorClass._tag] as const)
  )
)

/**
 * The contract's error as its schema encodes it, from the wire's envelope (`{ error: { code, message, param? },
 * request_id }`, which the server's ErrorEnvelope writes), so the client decodes it into the typed error.
 * Undefined when the body is no envelope of a known code.
 */
export const contractErrorOf = (
  body: unknown,
  retryAfter: string | undefined
): Record<string, unknown> | undefined => {
  const error = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined
  if (typeof error !== "object" || error === null) return undefined
  const { code, message, param } = error as { code?: unknown; message?: unknown; param?: unknown }
  if (typeof code !== "string" || typeof message !== "string") return undefined
  const tag = tagOfCode.get(code)
  if (tag === undefined) return undefined
  return {
    _tag: tag,
    message,
    ...(tag === "InvalidRequest" && typeof param === "string" ? { param } : {}),
    ...(tag === "NotFound" ? { resource: code.replace(/_not_found$/, "") } : {}),
    ...(tag === "RateLimited" && retryAfter !== undefined && /^\d+$/.test(retryAfter)
      ? { retryAfterSeconds: Number(retryAfter) }
      : {})
  }
}

/** What an error answer's envelope says beyond the contract's classes: its docs line and its request id. */
export interface ErrorDetails {
  /** The code's line on the service's error page (`…/docs/errors#code`): what it means and what to do. */
  readonly docUrl: string | undefined
  /** The answer's request id (also its `X-Request-Id`): quote it to support. */
  readonly requestId: string | undefined
}

// The transport reads the envelope and the call's wrapper pins it to the decoded error; both run in the caller's
// fiber, so this carries it from one to the other without widening the contract's classes.
const lastErrorDetails = FiberRef.unsafeMake<ErrorDetails | undefined>(undefined)
const detailsOfError = new WeakMap<object, ErrorDetails>()

/** The `doc_url` and `request_id` of the answer a client error was decoded from (undefined for other errors). */
export const errorDetails = (error: unknown): ErrorDetails | undefined =>
  typeof error === "object" && error !== null ? detailsOfError.get(error) : undefined

const detailsOf = (body: unknown, requestIdHeader: string | undefined): ErrorDetails => {
  const envelope = (typeof body === "object" && body !== null ? body : {}) as {
    error?: { doc_url?: unknown }
    request_id?: unknown
  }
  const docUrl = envelope.error?.doc_url
  return {
    docUrl: typeof docUrl === "string" ? docUrl : undefined,
    requestId: typeof envelope.request_id === "string" ? envelope.request_id : requestIdHeader
  }
}

/** Error answers rewritten from the envelope into the contract's encoded errors (see `contractErrorOf`). */
const withContractErrors = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (send, request) =>
    Effect.flatMap(send, (response) =>
      response.status < 400
        ? Effect.succeed(response)
        : Effect.flatMap(
            Effect.orElseSucceed(response.text, () => ""),
            (text) => {
              let body: unknown
              try {
                body = JSON.parse(text)
              } catch {
                body = undefined
              }
              const encoded = contractErrorOf(body, response.headers["retry-after"])
              return Effect.as(
                FiberRef.set(lastErrorDetails, detailsOf(body, response.headers["x-request-id"])),
                HttpClientResponse.fromWeb(
                  request,
                  new Response(encoded === undefined ? text : JSON.stringify(encoded), {
                    status: response.status,
                    headers: { ...response.headers, "content-type": "application/json" }
                  })
                )
              )
            }
          )
    )
  )

/** A call whose decoded error keeps its answer's `doc_url` and request id (read them with `errorDetails`). */
const keepingDetails = <A, E, R>(call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(
    Effect.tapError(call, (error) =>
      Effect.map(FiberRef.get(lastErrorDetails), (details) => {
        if (details !== undefined && typeof error === "object" && error !== null)
          detailsOfError.set(error, details)
      })
    ),
    lastErrorDetails,
    undefined
  )

/** Every endpoint of every group, each wrapped by `keepingDetails`; the client's type is unchanged. */
const withDetails = <Client extends Record<string, Record<string, unknown>>>(client: Client): Client =>
  Object.fromEntries(
    Object.entries(client).map(([group, endpoints]) => [
      group,
      Object.fromEntries(
        Object.entries(endpoints).map(([name, endpoint]) => [
          name,
          typeof endpoint === "function"
            ? (...args: Array<unknown>) =>
                keepingDetails(endpoint(...args) as Effect.Effect<unknown, unknown>)
            : endpoint
        ])
      )
    ])
  ) as Client

/** A client of the whole API, with the helpers; see the module's comment. */
export const makeClient = Effect.fn("DepositsClient.make")(function* (options: ClientOptions) {
  const made = yield* HttpApiClient.make(Api, {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    transformClient: (client) =>
      withContractErrors(
        withRetries(options.retry ?? {})(
          HttpClient.mapRequest(client, HttpClientRequest.bearerToken(options.apiKey))
        )
      )
  })
  const api = withDetails(made)

  /**
   * Creates a deposit request with an `Idempotency-Key` (a new random one unless given), so a retry after a
   * network error, a 429 or a 503 replays the same create instead of making a second request.
   */
  const createDepositRequest = (
    payload: CreateDepositRequestInput,
    create: { readonly idempotencyKey?: string } = {}
  ) =>
    api.depositRequests.create({
      headers: { "idempotency-key": create.idempotencyKey ?? newIdempotencyKey() },
      payload: payload as CreatePayload
    })

  /** Every request the filters match, newest first, page after page through `next_cursor`. */
  const listAll = (filters: ListFilters = {}) =>
    Stream.paginateChunkEffect(undefined as string | undefined, (startingAfter) =>
      Effect.map(
        api.depositRequests.list({
          urlParams: {
            limit: 100,
            ...filters,
            ...(startingAfter === undefined ? {} : { starting_after: startingAfter })
          } as typeof DepositRequestListParams.Type
        }),
        (page) => [Chunk.fromIterable(page.deposit_requests), Option.fromNullable(page.next_cursor)] as const
      )
    )

  // A plain string id; the contract's branded one is checked by the service (404 or 400 when it is not a dr_ id).
  const pathOf = (id: string) => ({ id }) as Parameters<typeof api.depositRequests.get>[0]["path"]

  /**
   * One long poll: the request as soon as its `version` differs from `version`, or as it is after `timeout`
   * seconds (1 to 30, default 25) — compare `version` to tell which.
   */
  const waitForChange = (id: string, version: string, wait: { readonly timeout?: number } = {}) =>
    api.depositRequests.get({
      path: pathOf(id),
      urlParams: { wait_for: "change", version, timeout: wait.timeout ?? 25 }
    })

  /** Long polls until the request's status is one of `statuses`, and answers it. Bound it with Effect.timeout. */
  const waitForStatus = (id: string, statuses: ReadonlyArray<Status>) =>
    Effect.flatMap(api.depositRequests.get({ path: pathOf(id), urlParams: { timeout: 25 } }), (first) =>
      Effect.iterate(first, {
        while: (current) => !statuses.includes(current.status),
        body: (current) => waitForChange(id, current.version)
      })
    )

  return { ...api, createDepositRequest, listAll, waitForChange, waitForStatus }
})

export type DepositsClient = Effect.Effect.Success<ReturnType<typeof makeClient>>
