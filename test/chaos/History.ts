/**
 * What a chaos run records for its checker: every client call and its answer, every request the workload made and
 * what its payer did on chain, every fault, every webhook endpoint and everything each receiver got.
 */

/** A seeded PRNG (mulberry32): the same seed draws the same workload and fault schedule. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    /** An integer in [min, max]. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p
  }
}
export type Prng = ReturnType<typeof prng>

export interface Call {
  readonly op: string
  readonly instance: number
  /** The release the instance ran when called (a rolling upgrade changes it mid-run). */
  readonly version: string
  readonly method: string
  readonly path: string
  readonly startedAt: number
  ms: number
  status?: number
  /** A 5xx answer's body, kept for the report. */
  body?: string
  /** A network error or a timeout: no answer. */
  error?: string
  /** The error happened while the instance it went to was being stopped or was down (a client fails over). */
  excused?: boolean
}

export type PayMode = "exact" | "partial" | "over" | "late" | "stranger" | "never"
export const PAY_MODES: ReadonlyArray<PayMode> = ["exact", "partial", "over", "late", "stranger", "never"]

export interface Payment {
  readonly from: `0x${string}`
  readonly amount: bigint
  readonly hash: `0x${string}`
  readonly at: number
}

export interface RequestRecord {
  readonly id: string
  readonly merchant: number
  readonly mode: PayMode
  readonly amount: bigint
  readonly payout: `0x${string}`
  wallet?: `0x${string}`
  address?: `0x${string}`
  readonly payments: Array<Payment>
  /** When the runner pulled the deadline forward (the `late` and `never` modes). */
  expiredAt?: number
  /** The workload finished its part (everything paid that it meant to pay). */
  done: boolean
}

export type ReceiverKind = "ok" | "slow" | "fail" | "hang"

export interface EndpointRecord {
  readonly id: string
  readonly merchant: number
  readonly receiver: ReceiverKind
  readonly path: string
  readonly url: string
  readonly secret: string
  readonly createdAt: number
  disabledAt?: number
  /** Registered at the start and never disabled: every event of its account must reach it. */
  readonly stable: boolean
}

export interface Delivery {
  readonly path: string
  readonly eventId: string
  readonly body: Buffer
  readonly signature: string
  readonly at: number
  readonly status: number
}

export interface FaultRecord {
  readonly kind: string
  readonly at: number
  readonly detail: string
}

export interface History {
  readonly seed: number
  readonly seconds: number
  readonly calls: Array<Call>
  readonly requests: Array<RequestRecord>
  readonly endpoints: Array<EndpointRecord>
  readonly deliveries: Array<Delivery>
  readonly faults: Array<FaultRecord>
  /** Unexpected answers the workload saw (a replay that did not replay, say), named as violations. */
  readonly anomalies: Array<string>
  readonly notes: Array<string>
  /** Per instance, the intervals during which it was being stopped or was down. */
  readonly downtime: Array<Array<{ from: number; to: number }>>
  lastFaultAt: number
}

export const emptyHistory = (seed: number, seconds: number, instances: number): History => ({
  seed,
  seconds,
  calls: [],
  requests: [],
  endpoints: [],
  deliveries: [],
  faults: [],
  anomalies: [],
  notes: [],
  downtime: Array.from({ length: instances }, () => []),
  lastFaultAt: 0
})

export const countBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1
  return out
}

/** A call without an answer is excused when its instance was being stopped or down at some point during it. */
export const isExcused = (history: History, call: Call) => {
  const end = call.startedAt + call.ms
  return (history.downtime[call.instance] ?? []).some(
    (span) => span.from <= end + 1_000 && span.to >= call.startedAt - 1_000
  )
}
