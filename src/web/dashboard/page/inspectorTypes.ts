/** The inspector's shapes, as the API serves them (`/v1/lifecycle/…`, `/v1/deposit-requests/{id}/steps`). */

export interface Point {
  readonly x: number
  readonly y: number
}

export interface Box extends Point {
  readonly width: number
  readonly height: number
}

export interface MachineState extends Box {
  readonly id: string
  readonly path: string
  readonly key: string
  readonly parent: string | null
  readonly type: "atomic" | "compound" | "parallel" | "final" | "history"
  readonly initial: boolean
  readonly depth: number
  readonly description: string | null
}

export interface MachineTransition {
  readonly id: string
  readonly source: string
  readonly target: string
  readonly event: string
  readonly guard: string | null
  readonly actions: ReadonlyArray<string>
  readonly order: number
  readonly targetless: boolean
  readonly label: Box & { readonly lines: ReadonlyArray<string> }
  readonly points: ReadonlyArray<Point>
}

export interface LifecycleMachine {
  readonly machine_id: string
  readonly machine_version: number
  readonly digest: string
  readonly width: number
  readonly height: number
  readonly states: ReadonlyArray<MachineState>
  readonly transitions: ReadonlyArray<MachineTransition>
  readonly initial: ReadonlyArray<{
    readonly parent: string
    readonly target: string
    readonly dot: Point
    readonly points: ReadonlyArray<Point>
  }>
}

export type StateValue = string | { readonly [key: string]: StateValue }

export interface StepTransition {
  readonly source: string
  readonly targets: ReadonlyArray<string>
  readonly event: string
  readonly guard: string | null
}

export interface Step {
  readonly version: number
  readonly event_id: string
  readonly event: { readonly type: string; readonly [key: string]: unknown }
  readonly at: string
  readonly instance: string
  readonly status_before: string | null
  readonly status_after: string
  readonly state_before: StateValue | null
  readonly state_after: StateValue
  readonly transition: StepTransition | null
  readonly emitted: { readonly lifecycle: ReadonlyArray<string>; readonly commands: ReadonlyArray<string> }
  readonly snapshot_before: unknown
  readonly snapshot_after: unknown
  readonly context_changes: ReadonlyArray<{
    readonly path: string
    readonly before: unknown
    readonly after: unknown
  }>
}

export interface StepList {
  readonly deposit_request_id: string
  readonly machine_version: number
  readonly retained_from_version: number | null
  readonly data: ReadonlyArray<Step>
}

export interface FeedStep {
  readonly deposit_request_id: string
  readonly version: number
  readonly event_type: string
  readonly status_before: string | null
  readonly status_after: string
  readonly at: string
  readonly instance: string
}

export interface Feed {
  readonly data: ReadonlyArray<FeedStep>
  readonly next_cursor: string | null
}
