/**
 * The client for everyone who does not use Effect (package export `./fetch`): openapi-fetch over the types
 * openapi-typescript generates from /openapi.json (./openapi.d.ts, `npm run client:types`), with bearer
 * authentication, the retry policy of ./retry.ts at the transport, errors thrown as `ApiError`, and the helpers
 * the API's conventions need: an idempotent create, a cursor walk, long polls.
 */
import createFetchClient, { type Client } from "openapi-fetch"
import type { components, paths } from "./openapi"
import { newIdempotencyKey, type RetryOptions, retryDelayMs } from "./retry"

export type { components, paths } from "./openapi"
export type { RetryOptions } from "./retry"

type Schemas = components["schemas"]
export type DepositRequest = Schemas["DepositRequest"]
export type CreatedDepositRequest =
  paths["/v1/deposit-requests"]["post"]["responses"][201]["content"]["application/json"]
export type CreateDepositRequest = Schemas["CreateDepositRequest"]
export type DepositRequestStatus = DepositRequest["status"]
export type DepositRequestListQuery = Omit<
  NonNullable<paths["/v1/deposit-requests"]["get"]["parameters"]["query"]>,
  "starting_after" | "wait_for" | "version" | "timeout" | "limit"
>

/**
 * Any error answer of the API, as its envelope says: `{ error: { code, message, param?, doc_url }, request_id }`.
 */
export class ApiError extends Error {
  override readonly name = "ApiError"
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The answer's request id (also its `X-Request-Id`): quote it to support. */
    readonly requestId: string | undefined,
    /** The offending field of an `invalid_request`, dotted for nested fields. */
    readonly param?: string,
    /** The code's line on the service's error page (`…/docs/errors#code`): what it means and what to do. */
    readonly docUrl?: string
  ) {
    super(message)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** fetch with the retry policy: each try sends a fresh copy of the request (a body can be read once). */
const retryingFetch =
  (retry: RetryOptions, base: (request: Request) => Promise<Response>) =>
  async (request: Request): Promise<Response> => {
    const hasIdempotencyKey = request.headers.has("idempotency-key")
    for (let attempt = 0; ; attempt++) {
      let response: Response
      try {
        response = await base(request.clone())
      } catch (error) {
        const delay = retryDelayMs(
          { attempt, method: request.method, hasIdempotencyKey, status: undefined, retryAfter: undefined },
          retry
        )
        if (delay === undefined) throw error
        await sleep(delay)
        continue
      }
      const delay = retryDelayMs(
        {
          attempt,
          method: request.method,
          hasIdempotencyKey,
          status: response.status,
          retryAfter: response.headers.get("retry-after")
        },
        retry
      )
      if (delay === undefined) return response
      // The refused answer's body is not read: release it before waiting.
      await response.body?.cancel()
      await sleep(delay)
    }
  }

/** The body of an error answer as an `ApiError` (a body that is no envelope still gives its status). */
export const toApiError = (error: unknown, response: Response): ApiError => {
  const envelope = error as {
    error?: { code?: unknown; message?: unknown; param?: unknown; doc_url?: unknown }
    request_id?: unknown
  }
  const inner = typeof envelope === "object" && envelope !== null ? envelope.error : undefined
  return new ApiError(
    response.status,
    typeof inner?.code === "string" ? inner.code : `http_${response.status}`,
    typeof inner?.message === "string" ? inner.message : response.statusText || `HTTP ${response.status}`,
    typeof envelope?.request_id === "string"
      ? envelope.request_id
      : (response.headers.get("x-request-id") ?? undefined),
    typeof inner?.param === "string" ? inner.param : undefined,
    typeof inner?.doc_url === "string" ? inner.doc_url : undefined
  )
}

/** An openapi-fetch answer's data, or its error thrown as an `ApiError`. */
export const unwrap = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
  if (result.response.ok && result.error === undefined) return result.data as T
  throw toApiError(result.error, result.response)
}

export interface ClientOptions {
  /** The service's origin, e.g. `https://deposits.example.com` (paths start with `/v1`). */
  readonly baseUrl: string
  /** A `sk_…` API key of the account. */
  readonly apiKey: string
  readonly retry?: RetryOptions
  /** The fetch to use (default: the global one). */
  readonly fetch?: (request: Request) => Promise<Response>
}

export interface DepositsClient {
  /** The typed openapi-fetch client for every route; pass its answers to `unwrap` to throw `ApiError`s. */
  readonly api: Client<paths>
  /**
   * Creates a deposit request with an `Idempotency-Key` (a new random one unless given), so the transport's
   * retries after a network error, a 429 or a 503 replay the same create instead of making a second one.
   */
  readonly createDepositRequest: (
    body: CreateDepositRequest,
    options?: { readonly idempotencyKey?: string }
  ) => Promise<CreatedDepositRequest>
  readonly getDepositRequest: (id: string) => Promise<DepositRequest>
  /** Every request the filters match, newest first, reading page after page through `next_cursor`. */
  readonly listAll: (
    query?: DepositRequestListQuery & { readonly limit?: number }
  ) => AsyncIterableIterator<DepositRequest>
  /**
   * One long poll: the request as soon as its `version` differs from `version`, or as it is after `timeout`
   * seconds (1 to 30, default 25) — compare `version` to tell which.
   */
  readonly waitForChange: (
    id: string,
    version: string,
    options?: { readonly timeout?: number }
  ) => Promise<DepositRequest>
  /**
   * Long polls until the request's status is one of `statuses`, and answers it; throws when `deadlineMs`
   * (default 10 minutes) passes first.
   */
  readonly waitForStatus: (
    id: string,
    statuses: ReadonlyArray<DepositRequestStatus>,
    options?: { readonly deadlineMs?: number }
  ) => Promise<DepositRequest>
}

export const createClient = (options: ClientOptions): DepositsClient => {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(options.retry ?? {}, base)
  })

  const getDepositRequest = async (id: string) =>
    unwrap(await api.GET("/v1/deposit-requests/{id}", { params: { path: { id } } }))

  const waitForChange = async (id: string, version: string, wait: { readonly timeout?: number } = {}) =>
    unwrap(
      await api.GET("/v1/deposit-requests/{id}", {
        params: {
          path: { id },
          query: {
            wait_for: "change",
            version,
            ...(wait.timeout === undefined ? {} : { timeout: String(wait.timeout) })
          }
        }
      })
    )

  return {
    api,
    createDepositRequest: async (body, create = {}) =>
      unwrap(
        await api.POST("/v1/deposit-requests", {
          params: { header: { "idempotency-key": create.idempotencyKey ?? newIdempotencyKey() } },
          body
        })
      ),
    getDepositRequest,
    listAll: async function* ({ limit, ...filters } = {}) {
      // The description types query values as the strings they travel as; the page size is a number here.
      const query = limit === undefined ? filters : { ...filters, limit: String(limit) }
      let startingAfter: string | undefined
      do {
        const page = unwrap(
          await api.GET("/v1/deposit-requests", {
            params: {
              query: { ...query, ...(startingAfter === undefined ? {} : { starting_after: startingAfter }) }
            }
          })
        )
        yield* page.deposit_requests
        startingAfter = page.next_cursor ?? undefined
      } while (startingAfter !== undefined)
    },
    waitForChange,
    waitForStatus: async (id, statuses, wait = {}) => {
      const deadline = Date.now() + (wait.deadlineMs ?? 600_000)
      let current = await getDepositRequest(id)
      while (!statuses.includes(current.status)) {
        const left = Math.ceil((deadline - Date.now()) / 1000)
        if (left <= 0)
          throw new Error(`${id} is still ${current.status}, not ${statuses.join(" or ")}, at the deadline`)
        current = await waitForChange(id, current.version, { timeout: Math.min(25, Math.max(1, left)) })
      }
      return current
    }
  }
}
