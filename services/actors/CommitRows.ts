import type { Command, Recovery } from "../../machines/DepositRequest"
import type { Emitted, Step } from "../../machines/step"
import { toId } from "../domain/PrefixedId"
import { formatTimestamp } from "../domain/Timestamp"
import {
  type DepositRequestRow,
  lifecycleFactsOf,
  recoveryWire,
  toWire,
  webhookSubset
} from "../depositRequests/DepositRequestWire"

/**
 * A lifecycle event as `apply_actor_steps_v2` takes it: its webhook body is fixed here, so every delivery sends
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
 * Adds what one step emitted to `records`: each lifecycle event with its body, and each command for the service
 * that carries it out; the outbox rows they make link back to `traceParent`. Pure but for `newId`.
 */
export const addRecords = (
  records: Records,
  row: DepositRequestRow,
  s: Step,
  at: Date,
  newId: () => string,
  chainId: number,
  publicBaseUrl: string,
  traceParent: string | null
): void => {
  if (s.emitted.length === 0) return
  const wire = toWire(row, lifecycleFactsOf(s), chainId, publicBaseUrl)
  for (const emitted of s.emitted as ReadonlyArray<Emitted>) {
    const n = outboxRows(records)
    if (emitted.kind === "lifecycle") {
      const eventId = newId()
      const data: Record<string, unknown> = { deposit_request: webhookSubset(wire) }
      if (emitted.recovery !== undefined) data.recovery = recoveryWire(emitted.recovery as Recovery)
      const body = JSON.stringify({
        id: toId("evt", eventId),
        type: emitted.type,
        occurred_at: formatTimestamp(at),
        data
      })
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
