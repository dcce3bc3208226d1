import { Effect } from "effect"
import { Metrics } from "../platform/Metrics"

/**
 * Whether the configured chain has answered the start-up checks. An instance whose chain RPC does not answer at
 * start still starts (the API, sign-in and the dashboard need no chain), reports itself unready on `/v1/health` and
 * `deposits_chain_ready` until the start-up re-checks it and it answers (src/app/main.ts); the chain's workers retry
 * on their own meanwhile. Ready by default: a service with no chain, or one whose chain answered, is ready.
 */
export class ChainReadiness extends Effect.Service<ChainReadiness>()("deposits/ChainReadiness", {
  effect: Effect.gen(function* () {
    const metrics = yield* Metrics
    let waitingFor: string | undefined
    metrics.chainReady.set(1)
    return {
      /** Why the instance is unready (for the operator's log, never an answer), or undefined when ready. */
      waitingFor: () => waitingFor,
      waiting: (reason: string) =>
        Effect.sync(() => {
          waitingFor = reason
          metrics.chainReady.set(0)
        }),
      ready: Effect.sync(() => {
        waitingFor = undefined
        metrics.chainReady.set(1)
      })
    }
  }),
  dependencies: [Metrics.Default]
}) {}
