import type { Effect, Tracer } from "effect"
import { MACHINE_VERSION } from "../../machines/DepositRequest"
import type { DepositRequestEvent, Step } from "../../machines/step"
import { SnapshotVersionError } from "./ActorErrors"
import { type DepositRequestRow, nextRow } from "./ActorRow"
import { addRecords, emptyRecords } from "./CommitRows"
import type { LifecycleBodiesShape } from "./LifecycleBodies"

/** An event for one request, with the id it is deduplicated by. */
export interface ActorEvent {
  readonly depositRequestId: string
  readonly eventId: string
  readonly event: DepositRequestEvent
}

/** What one step of a commit made: the request's row after it, and the step. */
export interface Stepped {
  readonly row: DepositRequestRow
  readonly step: Step
}

/**
 * One caller's share of a commit: its events (stepped in the order given), the statements it runs in the same
 * transaction (its context already provided; given each event's outcome, `undefined` for a duplicate), and the
 * span its outbox rows link back to.
 */
export interface Member {
  readonly items: ReadonlyArray<ActorEvent>
  readonly also: ((outcomes: ReadonlyArray<Stepped | undefined>) => Effect.Effect<void, unknown>) | undefined
  readonly traceParent: string | null
  /** The caller's commit span, the parent of its steps' spans (the commit may run on another fiber). */
  readonly span: Tracer.AnySpan | undefined
}

/** What a commit writes and answers, decided before anything is written. */
export interface Plan {
  /** Per member, per event: what its step made, `undefined` for an event already applied. */
  readonly outcomes: ReadonlyArray<Array<Stepped | undefined>>
  readonly stepped: ReadonlyArray<{
    readonly id: string
    readonly event: DepositRequestEvent
    readonly step: Step
  }>
  /** Each request's row after its last step in the commit. */
  readonly finals: ReadonlyMap<string, DepositRequestRow>
  /** `apply_actor_steps_v3`'s input; `undefined` when no event is new. */
  readonly statement: string | undefined
}

/** What planning needs besides the rows: the commit's instant, the bodies' port and the step itself. */
export interface PlanInputs {
  readonly now: Date
  readonly bodies: LifecycleBodiesShape
  /** Steps one request for a member (the host traces it). */
  readonly step: (before: DepositRequestRow, item: ActorEvent, member: Member) => Step
  /** Whether the step history is kept (`STEP_HISTORY_DAYS` above 0), and this instance's name in it. */
  readonly history: boolean
  readonly instance: string
}

/**
 * An applied event as `apply_actor_steps_v3` takes it. For the step history (left out when it is off) its version,
 * the event itself, and the snapshot and status it left only when a later event of the commit stepped the same
 * request again: otherwise they are the request's row, which the statement carries once.
 */
interface EventRecord {
  readonly deposit_request_id: string
  readonly event_id: string
  version?: string
  event?: DepositRequestEvent
  snapshot?: unknown
  status?: string
}

/**
 * Steps every event not known to be applied, from the rows in `known`, and builds what `apply_actor_steps_v3`
 * writes. Nothing is written; an event twice in one commit, or already applied (`seen`), has no second effect.
 */
export const planCommit = (
  members: ReadonlyArray<Member>,
  known: ReadonlyMap<string, DepositRequestRow>,
  seen: ReadonlySet<string>,
  inputs: PlanInputs
): Plan | SnapshotVersionError => {
  const outcomes = members.map((m) => m.items.map((): Stepped | undefined => undefined))
  const current = new Map<string, DepositRequestRow>()
  const inBatch = new Set<string>()
  const events: Array<EventRecord> = []
  // Per history record, the row its step made (to tell whether the row is the request's last of the commit).
  const madeRows: Array<DepositRequestRow> = []
  const stepped: Array<{ readonly id: string; readonly event: DepositRequestEvent; readonly step: Step }> = []
  const records = emptyRecords()
  for (let m = 0; m < members.length; m++) {
    const member = members[m]!
    for (let i = 0; i < member.items.length; i++) {
      const item = member.items[i]!
      const key = `${item.depositRequestId} ${item.eventId}`
      if (seen.has(key) || inBatch.has(key)) continue
      inBatch.add(key)
      const before = current.get(item.depositRequestId) ?? known.get(item.depositRequestId)!
      if (before.machine_version !== MACHINE_VERSION) {
        return new SnapshotVersionError({
          depositRequestId: before.id,
          found: before.machine_version,
          expected: MACHINE_VERSION
        })
      }
      const s = inputs.step(before, item, member)
      const row = nextRow(before, s, inputs.now)
      current.set(row.id, row)
      outcomes[m]![i] = { row, step: s }
      stepped.push({ id: row.id, event: item.event, step: s })
      events.push({ deposit_request_id: row.id, event_id: item.eventId })
      if (inputs.history) madeRows.push(row)
      addRecords(records, row, s, inputs.now, inputs.bodies, member.traceParent)
    }
  }
  if (inputs.history) {
    for (let e = 0; e < events.length; e++) {
      const record = events[e]!
      const row = madeRows[e]!
      record.version = row.version
      record.event = stepped[e]!.event
      if (current.get(row.id) !== row) {
        record.snapshot = row.snapshot
        record.status = row.status
      }
    }
  }
  return {
    outcomes,
    stepped,
    finals: current,
    statement: statementOf(known, current, events, records, inputs.now, inputs.instance)
  }
}

/** `apply_actor_steps_v3`'s input: what the database cannot derive, every row stamped with the one `at`. */
const statementOf = (
  known: ReadonlyMap<string, DepositRequestRow>,
  current: ReadonlyMap<string, DepositRequestRow>,
  events: ReadonlyArray<EventRecord>,
  records: ReturnType<typeof emptyRecords>,
  at: Date,
  instance: string
) =>
  events.length === 0
    ? undefined
    : JSON.stringify({
        at,
        instance,
        requests: [...current.values()].map((r) => ({
          id: r.id,
          expected_version: known.get(r.id)!.version,
          version: r.version,
          status: r.status,
          snapshot: r.snapshot,
          received_base_units: r.received_base_units,
          deposit_address: r.deposit_address
        })),
        events,
        lifecycle: records.lifecycle,
        commands: records.commands
      })
