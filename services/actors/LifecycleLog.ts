import { Effect } from "effect"
import type { DepositRequestEvent, Step } from "../../machines/step"
import { formatAmount } from "../domain/Amount"
import { toId } from "../domain/PrefixedId"

/** A request's first step, as the log tells it: its id, amount and first status. */
export interface CreatedRequest {
  readonly id: string
  readonly amount_base_units: string
  readonly status: string
}

/** One committed step, as the actor host hands it over after the commit. */
export interface SteppedRequest {
  readonly id: string
  readonly event: DepositRequestEvent
  readonly step: Step
}

const usdc = (baseUnits: string) => `${formatAmount(BigInt(baseUnits))} USDC`

/** How the received total stands against the amount asked for, in the words a merchant uses. */
const balance = (received: string, amount: string) => {
  const difference = BigInt(received) - BigInt(amount)
  const standing =
    difference === 0n
      ? "paid exactly"
      : difference < 0n
        ? `underpaid by ${formatAmount(-difference)}`
        : `overpaid by ${formatAmount(difference)}`
  return `received ${formatAmount(BigInt(received))} of ${formatAmount(BigInt(amount))}, ${standing}`
}

/** What the event itself carries that a reader wants: the amount where there is one, else its one fact. */
const eventDetail = (event: DepositRequestEvent, s: Step): string => {
  switch (event.type) {
    case "payer.verified":
      return ` (${event.method})`
    case "payer.wallet_attested":
      return ` wallet ${event.wallet}, deposit address ${event.address}`
    case "deposit.credited":
      return ` ${usdc(event.amount_base_units)} from ${event.from}; ${balance(
        s.context.received_base_units,
        s.context.amount_base_units
      )}`
    case "settlement.confirmed":
      return ` ${usdc(s.context.amount_base_units)} to ${s.context.payout_address}, tx ${event.tx_hash}`
    case "return.confirmed": {
      const recovery = s.context.recoveries.find((r) => r.id === event.command_id)
      return recovery === undefined
        ? ` tx ${event.tx_hash}`
        : ` ${usdc(recovery.amount_base_units)} (${recovery.reason}), tx ${event.tx_hash}`
    }
    case "attention.raised":
      return ` ${event.code} (paused)`
    case "operator.resumed":
      return event.payout_address === undefined ? "" : ` to payout address ${event.payout_address}`
    case "deadline.reached":
      return ""
    case "merchant.cancelled":
      return event.reason === null ? " by the merchant" : ` by the merchant: ${event.reason}`
  }
}

/** What the step emitted: the webhook events and the transfers commanded, with their amounts. */
const emittedDetail = (s: Step): string => {
  const events: Array<string> = []
  const commands: Array<string> = []
  for (const e of s.emitted) {
    if (e.kind === "lifecycle") {
      events.push(e.type)
    } else if (e.type === "settle") {
      commands.push(`settle ${usdc(e.amount_base_units)}`)
    } else if (e.type === "return") {
      commands.push(`return ${usdc(e.amount_base_units)} (${e.reason})`)
    } else {
      commands.push(`retry ${e.command_id}`)
    }
  }
  return (
    (events.length === 0 ? "" : `; webhook ${events.join(", ")}`) +
    (commands.length === 0 ? "" : `; commands ${commands.join(", ")}`)
  )
}

/** The line of a request's creation. */
export const createdLine = (row: CreatedRequest): string =>
  `lifecycle ${toId("dr", row.id)} created ${usdc(row.amount_base_units)} → ${row.status}`

/** The line of one committed step: the request, the event with its amount, the status it led to, what it emitted. */
export const steppedLine = (s: SteppedRequest): string =>
  `lifecycle ${toId("dr", s.id)} ${s.event.type}${eventDetail(s.event, s.step)} → ${s.step.status}${emittedDetail(s.step)}`

export interface LifecycleLogShape {
  readonly created: (row: CreatedRequest) => Effect.Effect<void>
  readonly stepped: (steps: ReadonlyArray<SteppedRequest>) => Effect.Effect<void>
}

/**
 * One log line per lifecycle change, for a developer watching the sandbox. An optional service: the actor host
 * writes to it only when the composition root provides it (the sandbox's `npm start`), so production, the tests
 * and the benchmarks pay nothing for it. The lines are written after the commit, as the inspector's steps are.
 */
export class LifecycleLog extends Effect.Service<LifecycleLog>()("deposits/LifecycleLog", {
  succeed: {
    // Untraced: they run after every commit, and a log line is all they do.
    created: Effect.fnUntraced(function* (row: CreatedRequest) {
      yield* Effect.logInfo(createdLine(row))
    }),
    stepped: Effect.fnUntraced(function* (steps: ReadonlyArray<SteppedRequest>) {
      for (const s of steps) yield* Effect.logInfo(steppedLine(s))
    })
  } satisfies LifecycleLogShape
}) {}
