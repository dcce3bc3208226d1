import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Option, ParseResult, Runtime } from "effect"

/**
 * The one place PostgreSQL failures are classified. A failed statement is an `SqlError` whose `cause` is the
 * driver's error: node-postgres puts the server's SQLSTATE in its `code` (five characters, `23505`), a socket
 * failure its errno (`ECONNREFUSED`). Four questions are asked of it, each answered here:
 * - `isDatabaseUnavailable`: the server is away or going (the edge answers 503, not 500);
 * - `isWriteConflict`: two writers collided on a lock (a deadlock, a serialization failure): try again;
 * - `mayBeOneCallers`: a failure of a statement shared by several callers that may be one caller's input (a
 *   batch is then split), not the server's or the connection's (the batch fails at once);
 * - `orDieOnSql`/`dieOnSqlErrors`: any other failure of the database is a defect, a logged 500
 *   (`orDieOnStorage` also for rows read through `SqlSchema`).
 */

/** The SQLSTATE an `SqlError` carries from the server (its cause's five-character `code`), if it has one. */
export const sqlStateOf = (error: unknown): string | undefined => {
  if ((error as { readonly _tag?: string } | null | undefined)?._tag !== "SqlError") return undefined
  const code = ((error as { readonly cause?: unknown }).cause as { readonly code?: unknown } | undefined)
    ?.code
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/**
 * SQLSTATE classes of a failing server or connection, whatever the rows: connection exception, insufficient
 * resources, operator intervention (shutdown, statement timeout), system error.
 */
const SYSTEMIC_CLASSES = new Set(["08", "53", "57", "58"])

/**
 * Whether a failed statement may be one caller's doing (of the callers that share it), so the batch is split to
 * commit the others: a failure that is not an `SqlError`, a defect, or a statement PostgreSQL refused with a data
 * or constraint error (a SQLSTATE outside the systemic classes). No SQLSTATE (no connection) or a systemic one:
 * nobody's input, and the batch fails at once.
 */
export const mayBeOneCallers = (cause: Cause.Cause<unknown>): boolean =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => true,
    onSome: (error) => {
      if ((error as { readonly _tag?: string } | null | undefined)?._tag !== "SqlError") return true
      const state = sqlStateOf(error)
      return state !== undefined && !SYSTEMIC_CLASSES.has(state.slice(0, 2))
    }
  })

/** Two writers of one row serialize on its lock; a deadlock or a serialization failure is worth another try. */
export const isWriteConflict = (error: unknown): boolean =>
  (error as { readonly _tag?: string } | null | undefined)?._tag === "SqlError" &&
  /deadlock|could not serialize/i.test(String((error as { readonly cause?: unknown }).cause))

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

/** What the database side of a query read through `SqlSchema` can fail with, none of them a domain outcome. */
type StorageFailure = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

/**
 * `orDieOnSql` widened to rows: a failed statement, a row that does not decode to its schema (a renamed, dropped
 * or retyped column) and no row where `SqlSchema.single` expects one are all defects, a logged 500.
 */
export const orDieOnStorage = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, StorageFailure>, R> =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, StorageFailure> =>
      e instanceof SqlError || ParseResult.isParseError(e) || Cause.isNoSuchElementException(e),
    Effect.die
  ) as Effect.Effect<A, Exclude<E, StorageFailure>, R>

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
