import type { Command, Step } from "../../machines/step"
import type { DepositRequestRow } from "./ActorRow"
import type { LifecycleBodiesShape, LifecycleBodyOf } from "./LifecycleBodies"
import { lifecycleEventId } from "./LifecycleEventId"

/**
 * A lifecycle event as `apply_actor_steps_v3` takes it: its webhook body is fixed here, so every delivery sends
 * the same bytes. The database stamps it with the commit's instant, gives it its request's account, and writes
 * the outbox row that announces it (only if the event is written, not a duplicate). `dedupe` is left out when it
 * is the type itself.
 */
export type LifecycleRecord = {
  /** Its announcement's place among the commit's outbox rows. */
  readonly n: number
  readonly id: string
  readonly deposit_request_id: string
  readonly type: string
  readonly dedupe?: string
  readonly body: string
  readonly trace_parent?: string
}

/** A command's outbox row, for the service that carries it out. */
export type CommandRecord = {
  /** Its place among the commit's outbox rows. */
  readonly n: number
  readonly topic: string
  readonly deposit_request_id: string
  readonly payload: Command
  readonly trace_parent?: string
}

/** What the steps of one commit emitted, as rows to insert; `n` orders their outbox rows in emission order. */
export interface Records {
  readonly lifecycle: Array<LifecycleRecord>
  readonly commands: Array<CommandRecord>
}

export const emptyRecords = (): Records => ({ lifecycle: [], commands: [] })

/** How many outbox rows the records make (every lifecycle event written announces itself). */
const outboxRows = (records: Records) => records.lifecycle.length + records.commands.length

/**
 * Adds what one step emitted to `records`: each lifecycle event with its body (rendered through the port, once
 * per step), and each command for the service that carries it out; the outbox rows they make link back to
 * `traceParent`. Pure but for the port. An event's id is derived from its request and dedupe key (`lifecycleEventId`).
 */
export const addRecords = (
  records: Records,
  row: DepositRequestRow,
  s: Step,
  at: Date,
  bodies: LifecycleBodiesShape,
  traceParent: string | null
): void => {
  if (s.emitted.length === 0) return
  let bodyOf: LifecycleBodyOf | undefined
  for (const emitted of s.emitted) {
    const n = outboxRows(records)
    if (emitted.kind === "lifecycle") {
      const eventId = lifecycleEventId(row.id, emitted.type, emitted.dedupe)
      bodyOf ??= bodies.forStep(row, s)
      const body = bodyOf(eventId, emitted, at)
      // The optional fields only when they say something: the statement's JSON then leaves them out.
      const record: { -readonly [K in keyof LifecycleRecord]: LifecycleRecord[K] } = {
        n,
        id: eventId,
        deposit_request_id: row.id,
        type: emitted.type,
        body
      }
      if (emitted.dedupe !== emitted.type) record.dedupe = emitted.dedupe
      if (traceParent !== null) record.trace_parent = traceParent
      records.lifecycle.push(record)
    } else {
      const record: { -readonly [K in keyof CommandRecord]: CommandRecord[K] } = {
        n,
        topic: `command.${emitted.type}`,
        deposit_request_id: row.id,
        payload: emitted
      }
      if (traceParent !== null) record.trace_parent = traceParent
      records.commands.push(record)
    }
  }
}
