import { Duration, Effect, Option } from "effect"
import { runWorker } from "../platform/Worker"
import { AUDIT_SWEEP_BATCH, AuditLog } from "./AuditLog"

/** How often the audit log is swept once nothing is left to delete. */
export const AUDIT_SWEEP_INTERVAL = Duration.hours(1)

/**
 * Entries past `AUDIT_LOG_RETENTION_DAYS` are deleted by one instance at a time, a bounded batch per pass: passes
 * follow each other at once while a pass deleted a full batch, then wait for the interval.
 */
export const AuditLogSweeperLive = runWorker({
  name: "AuditLog.sweep",
  lease: "audit-log-sweeper",
  step: Effect.flatMap(AuditLog, (log) => log.sweep()),
  every: (deleted: Option.Option<number>) =>
    Option.getOrElse(deleted, () => 0) >= AUDIT_SWEEP_BATCH
      ? Effect.yieldNow()
      : Effect.sleep(AUDIT_SWEEP_INTERVAL),
  failure: "audit log sweep failed",
  failureLevel: "Warning"
})
