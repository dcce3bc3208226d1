import { Effect, Layer, Schedule } from "effect"
import { Lease } from "../platform/Lease"
import { SWEEP_INTERVAL } from "./AttachmentRules"
import { Attachments } from "./Attachments"

/** Pending uploads are checked, and abandoned ones expired, by one instance at a time. */
export const AttachmentSweeperLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const attachments = yield* Attachments
    const lease = yield* Lease
    const pass = attachments.sweep.pipe(
      Effect.withSpan("Attachments.sweep"),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("attachment sweep failed", cause), 0))
    )
    yield* Effect.forkScoped(
      lease.whileHolding("attachment-sweeper", Effect.repeat(pass, Schedule.spaced(SWEEP_INTERVAL)))
    )
  })
)
