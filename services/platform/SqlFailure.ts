import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

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
