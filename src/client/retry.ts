/**
 * When a client tries a call again: the one policy both public clients (./effect.ts, ./fetch.ts) apply at their
 * transport, so every route gets it, not only the helpers.
 *
 * - Only an idempotent call is ever tried again: a read (GET, HEAD, OPTIONS) or a request with an
 *   `Idempotency-Key` (the service answers a replay with the original). A POST, PATCH or DELETE without a key is
 *   sent once whatever happens, so a proxy that answered after forwarding can never make it happen twice.
 * - 429, 502, 503, 504, a time-out and no answer at all are tried again; any other answer is given back.
 * - The wait is full jitter (a uniform draw up to the capped exponential backoff), so a burst of clients refused
 *   together does not come back together; with `Retry-After` the draw is added to it, never taken from it.
 */

export interface RetryOptions {
  /** Tries after the first (default 3). */
  readonly maxRetries?: number
  /** A `Retry-After` longer than this (seconds, default 60) is not waited for: the answer is given back. */
  readonly maxRetryAfterSeconds?: number
  /** The backoff's first ceiling in ms (default 250); each try doubles it. */
  readonly baseDelayMs?: number
  /** The backoff's largest ceiling in ms (default 4000). */
  readonly maxDelayMs?: number
  /** A number in [0, 1) (default `Math.random`): the jitter's draw. */
  readonly random?: () => number
}

export interface Attempted {
  /** 0 for the first try. */
  readonly attempt: number
  readonly method: string
  readonly hasIdempotencyKey: boolean
  /** The answer's status, or undefined when no answer came (a network error or a time-out). */
  readonly status: number | undefined
  /** The answer's `Retry-After` header, when there was one. */
  readonly retryAfter: string | null | undefined
}

const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS"])
const retriedStatuses = new Set([429, 502, 503, 504])

export const isIdempotent = (method: string, hasIdempotencyKey: boolean) =>
  idempotentMethods.has(method.toUpperCase()) || hasIdempotencyKey

/** `Retry-After` as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterSeconds = (value: string | null | undefined, now = Date.now()): number | undefined => {
  if (value === null || value === undefined || value.trim() === "") return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** The backoff's ceiling before try `attempt + 1`: base, 2 × base, … up to the largest. */
export const backoffCeilingMs = (attempt: number, options: RetryOptions = {}) =>
  Math.min(options.maxDelayMs ?? 4000, (options.baseDelayMs ?? 250) * 2 ** attempt)

/** How long to wait before trying again, or undefined to give the answer (or the failure) back. */
export const retryDelayMs = (attempted: Attempted, options: RetryOptions = {}): number | undefined => {
  if (attempted.attempt >= (options.maxRetries ?? 3)) return undefined
  if (!isIdempotent(attempted.method, attempted.hasIdempotencyKey)) return undefined
  if (attempted.status !== undefined && !retriedStatuses.has(attempted.status)) return undefined
  const jitter = Math.floor((options.random ?? Math.random)() * backoffCeilingMs(attempted.attempt, options))
  const seconds = attempted.status === undefined ? undefined : retryAfterSeconds(attempted.retryAfter)
  if (seconds === undefined) return jitter
  return seconds > (options.maxRetryAfterSeconds ?? 60) ? undefined : seconds * 1000 + jitter
}

/** A key for a create: random, so two creates never share one by accident. */
export const newIdempotencyKey = () => `client-${globalThis.crypto.randomUUID()}`
