import { Duration, Effect, Option } from "effect"
import { runWorker } from "../platform/Worker"
import { StepHistory, SWEEP_BATCH } from "./StepHistory"

/** How often the step history is swept once nothing is left to delete. */
export const STEP_SWEEP_INTERVAL = Duration.minutes(10)

/**
 * Steps past `STEP_HISTORY_DAYS` are deleted by one instance at a time, a bounded batch per pass: passes follow
 * each other at once while a pass deleted a full batch, then wait for the interval.
 */
export const StepHistorySweeperLive = runWorker({
  name: "StepHistory.sweep",
  lease: "step-history-sweeper",
  step: Effect.flatMap(StepHistory, (history) => history.sweep()),
  every: (deleted: Option.Option<number>) =>
    Option.getOrElse(deleted, () => 0) >= SWEEP_BATCH ? Effect.yieldNow() : Effect.sleep(STEP_SWEEP_INTERVAL),
  failure: "step history sweep failed",
  failureLevel: "Warning"
})
