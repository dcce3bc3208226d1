import { Config } from "effect"

/**
 * `STEP_HISTORY_DAYS`: how long each applied step of a request is kept for the inspector (default 30); 0 writes
 * no history at all (and the sweeper deletes what is left).
 */
export const stepHistoryDays = Config.integer("STEP_HISTORY_DAYS").pipe(
  Config.withDefault(30),
  Config.validate({ message: "STEP_HISTORY_DAYS: must be 0 or more", validation: (n) => n >= 0 })
)
