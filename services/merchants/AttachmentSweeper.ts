import { Effect } from "effect"
import { runWorker } from "../platform/Worker"
import { SWEEP_INTERVAL } from "./AttachmentRules"
import { Attachments } from "./Attachments"

/** Pending uploads are checked, and abandoned ones expired, by one instance at a time. */
export const AttachmentSweeperLive = runWorker({
  name: "Attachments.sweep",
  lease: "attachment-sweeper",
  step: Effect.flatMap(Attachments, (attachments) => attachments.sweep),
  every: SWEEP_INTERVAL,
  failure: "attachment sweep failed",
  failureLevel: "Warning"
})
