/**
 * The client for everyone who does not use Effect (package `@deposits/fetch`): openapi-fetch over the types
 * openapi-typescript generates from /openapi.json (./openapi.d.ts, `npm run client:types`), with bearer
 * authentication, time-outs and the retry policy of ./retry.ts at the transport, and errors thrown as `ApiError`
 * whose `code` is typed per operation from the same file, so regenerating it is all a contract change needs.
 * Helpers: an idempotent create, a cursor walk over every list, long polls.
 */
import createFetchClient, { type Client, type Middleware } from "openapi-fetch"
import type { components, paths as GeneratedPaths } from "./openapi"
import { newIdempotencyKey, type RetryOptions, retryAfterSeconds, retryDelayMs } from "./retry"

export type { components } from "./openapi"
export type { RetryOptions } from "./retry"

/**
 * Query parameters the contract carries as digits (`limit`, `timeout`, `after_version`): a number here, written
 * out as its digits. A test holds this list to every query parameter of the document whose pattern is an integer.
 */
export const integerQueryParameters = ["limit", "timeout", "after_version"] as const
type IntegerQueryParameter = (typeof integerQueryParameters)[number]

type NumericQuery<Q> = { [K in keyof Q]: K extends IntegerQueryParameter ? number : Q[K] }
type NumericParameters<P> = { [K in keyof P]: K extends "query" ? NumericQuery<P[K]> : P[K] }
type NumericOperation<Op> = Op extends { parameters: unknown }
  ? { [K in keyof Op]: K extends "parameters" ? NumericParameters<Op[K]> : Op[K] }
  : Op

/** The generated `paths`, with the integer query parameters typed as numbers. */
export type paths = {
  [P in keyof GeneratedPaths]: { [M in keyof GeneratedPaths[P]]: NumericOperation<GeneratedPaths[P][M]> }
}

type HttpMethod = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace"
type MethodsOf<P extends keyof paths> = {
  [M in keyof paths[P] & HttpMethod]-?: [NonNullable<paths[P][M]>] extends [never] ? never : M
}[keyof paths[P] & HttpMethod]

/** Every operation of the API as `"METHOD /path"`, e.g. `"POST /v1/deposit-requests"`. */
export type Operation = { [P in keyof paths]: `${Uppercase<MethodsOf<P>>} ${P & string}` }[keyof paths]

type OperationObject<O extends string> = O extends `${infer M} ${infer P}`
  ? P extends keyof paths
    ? Lowercase<M> extends keyof paths[P]
      ? NonNullable<paths[P][Lowercase<M>]>
      : never
    : never
  : never

type ErrorBodies<Op> = Op extends { responses: infer R }
  ? {
      [S in keyof R]: S extends number
        ? `${S}` extends `4${string}` | `5${string}`
          ? R[S] extends { content: { "application/json": infer B } }
            ? B
            : never
          : never
        : never
    }[keyof R]
  : never
type CodeOf<B> = B extends { error: { code: infer C extends string } } ? C : never

/**
 * Codes any operation may answer though the contract lists them on none or only some: the service's own failure
 * (500), a dependency down or an instance going away (503), and headers larger than the service reads (431).
 */
export type AnyOperationErrorCode = "internal_error" | "service_unavailable" | "request_headers_too_large"

/** The error codes an operation answers: its error responses' codes in the contract, and the codes of any call. */
export type ErrorCode<O extends Operation = Operation> =
  | CodeOf<ErrorBodies<OperationObject<O>>>
  | AnyOperationErrorCode

/**
 * An error answer of the API, as its envelope says (`{ error: { code, message, param?, doc_url }, request_id }`),
 * for the operation that answered it. `isApiError(e, "POST /v1/deposit-requests")` narrows `code` to that
 * operation's codes, so a `switch` over them can be exhaustive.
 */
export class ApiError<O extends Operation = Operation> extends Error {
  override readonly name = "ApiError"
  constructor(
    /** The operation that answered, as `"METHOD /path"` with the contract's path template. */
    readonly operation: O,
    readonly status: number,
    readonly code: ErrorCode<O>,
    message: string,
    /** The answer's request id (also its `X-Request-Id`): quote it to support. */
    readonly requestId: string | undefined,
    /** The offending field of an `invalid_request`, dotted for nested fields. */
    readonly param: string | undefined,
    /** The code's line on the service's error page (`…/docs/errors#code`): what it means and what to do. */
    readonly docUrl: string | undefined,
    /** The answer's `Retry-After` in seconds (a 429 or 503 the client did not try again, or tried too often). */
    readonly retryAfterSeconds: number | undefined
  ) {
    super(message)
  }
}

/** Is this an `ApiError` (of that operation, when one is named)? Narrows `code` to the operation's codes. */
export const isApiError = <O extends Operation = Operation>(
  error: unknown,
  operation?: O
): error is ApiError<O> =>
  error instanceof ApiError && (operation === undefined || error.operation === operation)

/** No answer within the time-out, after the retries the call was allowed. */
export class TimeoutError extends Error {
  override readonly name = "TimeoutError"
  constructor(
    readonly operation: string,
    readonly timeoutMs: number
  ) {
    super(`${operation} got no complete answer within ${timeoutMs} ms`)
  }
}

/** No answer at all (refused, reset, unresolvable), after the retries the call was allowed. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError"
  constructor(
    readonly operation: string,
    override readonly cause: unknown
  ) {
    super(`${operation} got no answer: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

/** An error answer that is not the service's envelope (a proxy's page, a wrong `baseUrl`). */
export class UnexpectedResponseError extends Error {
  override readonly name = "UnexpectedResponseError"
  constructor(
    readonly operation: string,
    readonly status: number,
    /** The body's first 500 characters. */
    readonly bodyExcerpt: string
  ) {
    super(
      `${operation} answered ${status} without the service's error envelope: ${bodyExcerpt.slice(0, 200)}`
    )
  }
}

/** Per call: the caller's cancellation and a time-out of its own. */
export interface CallOptions {
  /** Cancels the call, its retries and their waits; the call rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** Time for each try, from sending to the end of the body, in ms (default: the client's `timeoutMs`). */
  readonly timeoutMs?: number
}

const sleep = (ms: number, signal: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** Why one try failed without an answer. */
const timedOut = Symbol("timed out")

/** The operation of each request the client sends, set by its middleware from openapi-fetch's schema path. */
const operationOfRequest = new WeakMap<Request, string>()
/** …and of each answer, so `unwrap` can name it. */
const operationOfResponse = new WeakMap<Response, string>()

const operationMiddleware: Middleware = {
  onRequest: ({ request, schemaPath }) => {
    operationOfRequest.set(request, `${request.method.toUpperCase()} ${schemaPath}`)
  },
  onResponse: ({ request, response }) => {
    operationOfResponse.set(response, operationOfRequest.get(request) ?? request.method.toUpperCase())
  }
}

/**
 * fetch with time-outs and the retry policy. Each try sends a fresh copy of the request (a body can be read
 * once) and reads the whole answer under its time-out, so a stalled body times out too.
 */
const transport =
  (retry: RetryOptions, timeoutMs: number, base: (request: Request) => Promise<Response>) =>
  async (request: Request): Promise<Response> => {
    const operation = operationOfRequest.get(request) ?? request.method.toUpperCase()
    const hasIdempotencyKey = request.headers.has("idempotency-key")
    const caller = request.signal
    for (let attempt = 0; ; attempt++) {
      const limit = new AbortController()
      const timer = setTimeout(() => limit.abort(timedOut), timeoutMs)
      let outcome: Response | { readonly failure: unknown }
      try {
        const answer = await base(
          new Request(request.clone(), { signal: AbortSignal.any([caller, limit.signal]) })
        )
        const body = await answer.arrayBuffer()
        outcome = new Response(answer.status === 204 || answer.status === 304 ? null : body, {
          status: answer.status,
          statusText: answer.statusText,
          headers: answer.headers
        })
      } catch (error) {
        if (caller.aborted) throw caller.reason
        outcome = { failure: limit.signal.aborted ? new TimeoutError(operation, timeoutMs) : error }
      } finally {
        clearTimeout(timer)
      }
      const answer = outcome instanceof Response ? outcome : undefined
      const delay = retryDelayMs(
        {
          attempt,
          method: request.method,
          hasIdempotencyKey,
          status: answer?.status,
          retryAfter: answer?.headers.get("retry-after")
        },
        retry
      )
      if (delay === undefined) {
        if (answer !== undefined) return answer
        const { failure } = outcome as { readonly failure: unknown }
        throw failure instanceof TimeoutError ? failure : new ConnectionError(operation, failure)
      }
      await sleep(delay, caller)
    }
  }

/** The body of an error answer as an `ApiError`, or an `UnexpectedResponseError` when it is no envelope. */
export const toApiError = (error: unknown, response: Response): ApiError | UnexpectedResponseError => {
  const operation = operationOfResponse.get(response) ?? "request"
  const envelope = error as {
    error?: { code?: unknown; message?: unknown; param?: unknown; doc_url?: unknown }
    request_id?: unknown
  }
  const inner = typeof envelope === "object" && envelope !== null ? envelope.error : undefined
  if (typeof inner?.code !== "string" || typeof inner.message !== "string")
    return new UnexpectedResponseError(
      operation,
      response.status,
      (typeof error === "string" ? error : (JSON.stringify(error) ?? "")).slice(0, 500)
    )
  return new ApiError(
    operation as Operation,
    response.status,
    inner.code as ErrorCode,
    inner.message,
    typeof envelope.request_id === "string"
      ? envelope.request_id
      : (response.headers.get("x-request-id") ?? undefined),
    typeof inner.param === "string" ? inner.param : undefined,
    typeof inner.doc_url === "string" ? inner.doc_url : undefined,
    retryAfterSeconds(response.headers.get("retry-after"))
  )
}

/** An openapi-fetch answer's data, or its error thrown as an `ApiError` (`UnexpectedResponseError`). */
export const unwrap = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
  if (result.response.ok && result.error === undefined) return result.data as T
  throw toApiError(result.error, result.response)
}

type Schemas = components["schemas"]
export type DepositRequest = Schemas["DepositRequest"]
export type CreatedDepositRequest =
  paths["/v1/deposit-requests"]["post"]["responses"][201]["content"]["application/json"]
export type CreateDepositRequest = Schemas["CreateDepositRequest"]
export type DepositRequestStatus = DepositRequest["status"]

type GetOf<P> = P extends keyof paths ? (paths[P] extends { get: infer G } ? G : never) : never
type PageOf<P> =
  GetOf<P> extends { responses: { 200: { content: { "application/json": infer B } } } } ? B : never
type QueryOf<P> = GetOf<P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never
type PathParamsOf<P> = GetOf<P> extends { parameters: { path: infer PP } } ? PP : never

/** Every list of the API: a GET that takes `starting_after` and answers a page with `next_cursor`. */
export type ListPath = {
  [P in keyof paths]: "starting_after" extends keyof QueryOf<P>
    ? PageOf<P> extends { next_cursor: string | null }
      ? P
      : never
    : never
}[keyof paths]
/** What a list's pages hold: the element of the page's one array. */
export type ListItem<P extends ListPath> = {
  [K in keyof PageOf<P>]: PageOf<P>[K] extends ReadonlyArray<infer I> ? I : never
}[keyof PageOf<P>]
/** A list's filters (the cursor and the long poll are the walk's). */
export type ListQuery<P extends ListPath> = Omit<
  QueryOf<P>,
  "starting_after" | "wait_for" | "version" | "timeout"
>
export type ListArgs<P extends ListPath> = ([PathParamsOf<P>] extends [never]
  ? { readonly path?: undefined }
  : { readonly path: PathParamsOf<P> }) & { readonly query?: ListQuery<P> } & CallOptions

export type DepositRequestListQuery = ListQuery<"/v1/deposit-requests">

export interface ClientOptions {
  /** The service's origin, e.g. `https://deposits.example.com` (paths start with `/v1`). */
  readonly baseUrl: string
  /** An API key of the account: `service_test_…` in the sandbox, `service_live_…` in production. */
  readonly apiKey: string
  readonly retry?: RetryOptions
  /** Time for each try, from sending to the end of the body, in ms (default 60000, above a long poll's 30 s). */
  readonly timeoutMs?: number
  /** The fetch to use (default: the global one). */
  readonly fetch?: (request: Request) => Promise<Response>
}

export interface DepositsClient {
  /**
   * The typed openapi-fetch client for every route (integer query parameters as numbers); pass its answers to
   * `unwrap` to throw `ApiError`s. Time-outs, retries and `signal` apply here too.
   */
  readonly api: Client<paths>
  /**
   * Creates a deposit request with an `Idempotency-Key` (a new random one unless given), so the transport's
   * retries replay the same create instead of making a second one.
   * Throws `ApiError<"POST /v1/deposit-requests">`.
   */
  readonly createDepositRequest: (
    body: CreateDepositRequest,
    options?: CallOptions & { readonly idempotencyKey?: string }
  ) => Promise<CreatedDepositRequest>
  /** Throws `ApiError<"GET /v1/deposit-requests/{id}">`. */
  readonly getDepositRequest: (id: string, options?: CallOptions) => Promise<DepositRequest>
  /**
   * Every item of a list, page after page through `next_cursor`, e.g. `list("/v1/issuers")`,
   * `list("/v1/webhooks/{id}/deliveries", { path: { id }, query: { limit: 100 } })`.
   */
  readonly list: <P extends ListPath>(
    path: P,
    ...args: [PathParamsOf<P>] extends [never] ? [args?: ListArgs<P>] : [args: ListArgs<P>]
  ) => AsyncIterableIterator<ListItem<P>>
  /** Every deposit request the filters match, newest first: `list("/v1/deposit-requests", { query })`. */
  readonly listAll: (
    query?: DepositRequestListQuery,
    options?: CallOptions
  ) => AsyncIterableIterator<DepositRequest>
  /**
   * One long poll: the request as soon as its `version` differs from `version`, or as it is after `timeout`
   * seconds (1 to 30, default 25) — compare `version` to tell which.
   */
  readonly waitForChange: (
    id: string,
    version: string,
    options?: CallOptions & { readonly timeout?: number }
  ) => Promise<DepositRequest>
  /**
   * Long polls until the request's status is one of `statuses`, and answers it; throws when `deadlineMs`
   * (default 10 minutes) passes first.
   */
  readonly waitForStatus: (
    id: string,
    statuses: ReadonlyArray<DepositRequestStatus>,
    options?: CallOptions & { readonly deadlineMs?: number }
  ) => Promise<DepositRequest>
}

export const createClient = (options: ClientOptions): DepositsClient => {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const retry = options.retry ?? {}
  const defaultTimeoutMs = options.timeoutMs ?? 60_000
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { authorization: `Bearer ${options.apiKey}` },
    fetch: transport(retry, defaultTimeoutMs, base)
  })
  api.use(operationMiddleware)

  /** openapi-fetch's per-call options for ours: the caller's signal, and a transport with the call's time-out. */
  const perCall = (call: CallOptions = {}) => ({
    ...(call.signal === undefined ? {} : { signal: call.signal }),
    ...(call.timeoutMs === undefined ? {} : { fetch: transport(retry, call.timeoutMs, base) })
  })

  const getDepositRequest = async (id: string, call?: CallOptions) =>
    unwrap(await api.GET("/v1/deposit-requests/{id}", { params: { path: { id } }, ...perCall(call) }))

  const waitForChange = async (
    id: string,
    version: string,
    { timeout, ...call }: CallOptions & { readonly timeout?: number } = {}
  ) =>
    unwrap(
      await api.GET("/v1/deposit-requests/{id}", {
        params: {
          path: { id },
          query: { wait_for: "change", version, ...(timeout === undefined ? {} : { timeout }) }
        },
        ...perCall(call)
      })
    )

  async function* list<P extends ListPath>(path: P, args?: ListArgs<P>): AsyncIterableIterator<ListItem<P>> {
    const {
      path: pathParams,
      query,
      signal,
      timeoutMs
    } = (args ?? {}) as CallOptions & {
      readonly path?: unknown
      readonly query?: Record<string, unknown>
    }
    const call = {
      ...(signal === undefined ? {} : { signal }),
      ...(timeoutMs === undefined ? {} : { timeoutMs })
    }
    let startingAfter: string | undefined
    do {
      // The list is chosen at run time; its types were checked by the signature.
      const get = api.GET as unknown as (
        path: string,
        init: Record<string, unknown>
      ) => Promise<{ data?: Record<string, unknown>; error?: unknown; response: Response }>
      const page = unwrap(
        await get(path, {
          params: {
            ...(pathParams === undefined ? {} : { path: pathParams }),
            query: { ...query, ...(startingAfter === undefined ? {} : { starting_after: startingAfter }) }
          },
          ...perCall(call)
        })
      )
      const items = Object.values(page ?? {}).find(Array.isArray)
      if (items === undefined) throw new Error(`${path} answered a page without a list`)
      yield* items as Array<ListItem<P>>
      startingAfter = typeof page?.next_cursor === "string" ? page.next_cursor : undefined
    } while (startingAfter !== undefined)
  }

  return {
    api,
    createDepositRequest: async (body, { idempotencyKey, ...call } = {}) =>
      unwrap(
        await api.POST("/v1/deposit-requests", {
          params: { header: { "idempotency-key": idempotencyKey ?? newIdempotencyKey() } },
          body,
          ...perCall(call)
        })
      ),
    getDepositRequest,
    list: list as DepositsClient["list"],
    listAll: (query = {}, call = {}) => list("/v1/deposit-requests", { query, ...call }),
    waitForChange,
    waitForStatus: async (id, statuses, { deadlineMs, ...call } = {}) => {
      const deadline = Date.now() + (deadlineMs ?? 600_000)
      let current = await getDepositRequest(id, call)
      while (!statuses.includes(current.status)) {
        const left = Math.ceil((deadline - Date.now()) / 1000)
        if (left <= 0)
          throw new Error(`${id} is still ${current.status}, not ${statuses.join(" or ")}, at the deadline`)
        current = await waitForChange(id, current.version, {
          ...call,
          timeout: Math.min(25, Math.max(1, left))
        })
      }
      return current
    }
  }
}
