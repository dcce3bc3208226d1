import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Runtime } from "effect"

/**
 * Infrastructure failures of the database are not domain outcomes: they become defects, which the edge answers
 * with a logged 500 `internal_error`. Domain errors pass through untouched.
 */
export const orDieOnSql = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, SqlError> => e instanceof SqlError,
    Effect.die
  ) as Effect.Effect<A, Exclude<E, SqlError>, R>

/** `orDieOnSql` for every method of a service object. */
export const dieOnSqlErrors =
  <F extends (...args: never[]) => Effect.Effect<unknown, unknown, unknown>>(f: F) =>
  (...args: Parameters<F>) =>
    orDieOnSql(f(...args) as ReturnType<F>) as Effect.Effect<
      Effect.Effect.Success<ReturnType<F>>,
      Exclude<Effect.Effect.Error<ReturnType<F>>, SqlError>,
      Effect.Effect.Context<ReturnType<F>>
    >

/** SQLSTATE classes and codes that mean the server is away or going, not that the statement was wrong. */
const UNAVAILABLE_STATES = /^(08|57P0[1-3]|53300)/
const UNAVAILABLE_ERRNO = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND"
])
const UNAVAILABLE_MESSAGES =
  /connection terminated|terminating connection|timeout exceeded when trying to connect|the database system is (starting up|shutting down|in recovery mode)|connection .*(ended|closed)|client has encountered a connection error/i

/**
 * Whether a failure (an `SqlError`, or what it wraps) says the database could not be reached or went away mid-way:
 * the edge answers those `503 service_unavailable` (retry shortly), not a 500. A statement the database refused
 * (a constraint, a syntax error) is not one.
 */
export const isDatabaseUnavailable = (failure: unknown): boolean => {
  for (let current = failure, depth = 0; current !== null && current !== undefined && depth < 5; depth++) {
    if (typeof current !== "object") return false
    // A failure rethrown by `runPromise` (a read shared between callers, say) carries its cause inside.
    if (Runtime.isFiberFailure(current)) {
      const inner = current[Runtime.FiberFailureCauseId]
      return [...Cause.failures(inner), ...Cause.defects(inner)].some(isDatabaseUnavailable)
    }
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown }
    if (typeof code === "string" && (UNAVAILABLE_STATES.test(code) || UNAVAILABLE_ERRNO.has(code)))
      return true
    if (typeof message === "string" && UNAVAILABLE_MESSAGES.test(message)) return true
    if (Array.isArray((current as { errors?: unknown }).errors))
      return (current as { errors: Array<unknown> }).errors.some(isDatabaseUnavailable)
    current = cause
  }
  return false
}
