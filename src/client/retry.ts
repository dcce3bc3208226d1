/**
 * When a client tries a call again: the one policy both public clients (./effect.ts, ./fetch.ts) apply at their
 * transport, so every route gets it, not only the helpers.
 *
 * - 429: the service refused before doing anything, so any call is tried again after `Retry-After` seconds.
 * - 503 and network errors: the call may or may not have been done, so only an idempotent call is tried again —
 *   a read (GET, HEAD) or a POST with an `Idempotency-Key` (the service answers a replay with the original).
 */

export interface RetryOptions {
  /** Tries after the first (default 3). */
  readonly maxRetries?: number
  /** A `Retry-After` longer than this (seconds, default 60) is not waited for: the 429 is returned. */
  readonly maxRetryAfterSeconds?: number
}

export interface Attempted {
  /** 0 for the first try. */
  readonly attempt: number
  readonly method: string
  readonly hasIdempotencyKey: boolean
  /** The answer's status, or undefined when no answer came (a network error). */
  readonly status: number | undefined
  /** The answer's `Retry-After` header, when there was one. */
  readonly retryAfter: string | null | undefined
}

const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS"])

export const isIdempotent = (method: string, hasIdempotencyKey: boolean) =>
  idempotentMethods.has(method.toUpperCase()) || hasIdempotencyKey

/** `Retry-After` as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterSeconds = (value: string | null | undefined, now = Date.now()): number | undefined => {
  if (value === null || value === undefined || value.trim() === "") return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** Backoff for a retry without `Retry-After`: 250 ms, 500 ms, 1 s, … up to 4 s. */
const backoffMs = (attempt: number) => Math.min(4000, 250 * 2 ** attempt)

/** How long to wait before trying again, or undefined to give the answer (or the network error) back. */
export const retryDelayMs = (attempted: Attempted, options: RetryOptions = {}): number | undefined => {
  const maxRetries = options.maxRetries ?? 3
  if (attempted.attempt >= maxRetries) return undefined
  if (attempted.status === 429) {
    const seconds = retryAfterSeconds(attempted.retryAfter)
    if (seconds === undefined) return backoffMs(attempted.attempt)
    return seconds > (options.maxRetryAfterSeconds ?? 60) ? undefined : seconds * 1000
  }
  const idempotent = isIdempotent(attempted.method, attempted.hasIdempotencyKey)
  if (!idempotent) return undefined
  if (attempted.status === undefined) return backoffMs(attempted.attempt)
  if (attempted.status === 503) {
    const seconds = retryAfterSeconds(attempted.retryAfter)
    return seconds === undefined ? backoffMs(attempted.attempt) : seconds * 1000
  }
  return undefined
}

/** A key for a create: random, so two creates never share one by accident. */
export const newIdempotencyKey = () => `client-${globalThis.crypto.randomUUID()}`
