import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, ParseResult } from "effect"

/** What the database side of a query can fail with, none of them a domain outcome. */
type StorageFailure = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

/**
 * The room's one re-fail helper at the database, `orDieOnSql` widened to rows: a failed statement (`SqlError`), a
 * row that does not decode to its schema (`ParseError`: a renamed, dropped or retyped column) and no row where
 * `SqlSchema.single` expects one are infrastructure failures, defects the edge answers with a logged 500
 * `internal_error`. Domain errors pass through untouched.
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
