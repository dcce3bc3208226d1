import { Effect } from "effect"

/**
 * Waits `ms` of real time, whatever clock the test runs under: the service under test keeps its own timers, so a
 * test waiting for it must not wait on the test clock.
 */
export const pause = (ms: number) =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Asks `check` every `everyMs` until it holds or `withinMs` of real time have passed; answers its last answer. */
export const eventually = <E, R>(
  check: Effect.Effect<boolean, E, R>,
  withinMs: number,
  everyMs = 50
): Effect.Effect<boolean, E, R> =>
  Effect.gen(function* () {
    const until = Date.now() + withinMs
    while (Date.now() < until) {
      if (yield* check) return true
      yield* pause(everyMs)
    }
    return yield* check
  })
