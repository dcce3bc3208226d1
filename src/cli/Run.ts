import { ConfigError, Effect } from "effect"
import { CliError, docUrlOf, failureLines } from "./Output"

/** One line for a failure: a bad setting names the setting; anything else its message. */
const describe = async (failure: unknown): Promise<string> => {
  if (ConfigError.isConfigError(failure)) return (await import("../app/Config")).describeConfigError(failure)
  if (failure instanceof Error) return failure.message.replace(/^\(FiberFailure\) (Error: )?/, "")
  return String(failure)
}

/**
 * Runs a command's program: what it prints is its answer; a failure (typed or a defect) becomes one line on
 * stderr (and the service's `doc_url` under it, when it refused) and exit code 1. The process then exits at once, so no pool or socket keeps it alive.
 */
export const runCommand = <A, E>(program: Effect.Effect<A, E>): Promise<never> =>
  Effect.runPromise(
    program.pipe(
      Effect.catchAllDefect((defect) => Effect.fail(defect)),
      Effect.either
    )
  ).then(async (result) => {
    if (result._tag === "Right") process.exit(0)
    process.stderr.write(failureLines(await describe(result.left), docUrlOf(result.left)))
    process.exit(1)
  })

/** A promise-returning step whose rejection is the user's to read, as a `CliError`. */
export const attempt = <A>(run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (e) =>
      e instanceof CliError ? e : new CliError(e instanceof Error ? e.message : String(e), docUrlOf(e))
  })
