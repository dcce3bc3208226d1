import type { Recovery } from "../machines/DepositRequest"
import type { Emitted, Step } from "../machines/step"
import { toId } from "./domain/PrefixedId"
import { formatTimestamp } from "./domain/Timestamp"
import {
  type DepositRequestRow,
  lifecycleFactsOf,
  recoveryWire,
  toWire,
  webhookSubset
} from "./DepositRequestView"

/** A lifecycle event as stored: its webhook body is fixed here, so every delivery sends the same bytes. */
export type LifecycleRecord = {
  readonly id: string
  readonly account_id: string
  readonly deposit_request_id: string
  readonly type: string
  readonly dedupe: string
  readonly body: string
  readonly occurred_at: Date
}

/** An outbox row; one that announces a lifecycle event is kept only if that event is written (not a duplicate). */
export type OutboxRecord = {
  readonly lifecycleId: string | null
  readonly row: {
    readonly topic: string
    readonly deposit_request_id: string
    readonly payload: string
    readonly created_at: Date
  }
}

/** What the steps of one commit emitted, as rows to insert, in emission order. */
export interface Records {
  readonly lifecycle: Array<LifecycleRecord>
  readonly outbox: Array<OutboxRecord>
}

export const emptyRecords = (): Records => ({ lifecycle: [], outbox: [] })

/**
 * Adds what one step emitted to `records`: each lifecycle event with its body and the outbox row that announces
 * it, and each command as an outbox row for the service that carries it out. Pure but for `newId`.
 */
export const addRecords = (
  records: Records,
  row: DepositRequestRow,
  s: Step,
  at: Date,
  newId: () => string,
  chainId: number,
  publicBaseUrl: string
): void => {
  if (s.emitted.length === 0) return
  const wire = toWire(row, lifecycleFactsOf(s), chainId, publicBaseUrl)
  for (const emitted of s.emitted as ReadonlyArray<Emitted & Record<string, unknown>>) {
    if (emitted.kind === "lifecycle") {
      const eventId = newId()
      const data: Record<string, unknown> = { deposit_request: webhookSubset(wire) }
      if (emitted.recovery !== undefined) data.recovery = recoveryWire(emitted.recovery as Recovery)
      records.lifecycle.push({
        id: eventId,
        account_id: row.account_id,
        deposit_request_id: row.id,
        type: emitted.type as string,
        dedupe: emitted.dedupe as string,
        body: JSON.stringify({
          id: toId("evt", eventId),
          type: emitted.type,
          occurred_at: formatTimestamp(at),
          data
        }),
        occurred_at: at
      })
      records.outbox.push({
        lifecycleId: eventId,
        row: {
          topic: "lifecycle",
          deposit_request_id: row.id,
          payload: JSON.stringify({ event_id: eventId }),
          created_at: at
        }
      })
    } else {
      records.outbox.push({
        lifecycleId: null,
        row: {
          topic: `command.${emitted.type as string}`,
          deposit_request_id: row.id,
          payload: JSON.stringify(emitted),
          created_at: at
        }
      })
    }
  }
}
