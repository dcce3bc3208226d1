import { Context } from "effect"
import type { LifecycleEvent, Step } from "../../machines/step"
import type { DepositRequestRow } from "./ActorRow"

/**
 * Renders one lifecycle event's body: its id, the instant of the commit that raises it, and the event the step
 * emitted. The bytes are fixed here, inside the commit, so every delivery sends the same ones.
 */
export type LifecycleBodyOf = (eventId: string, event: LifecycleEvent, at: Date) => string

/**
 * The port through which the actor host gets the bytes of the lifecycle events it commits. The actor room knows
 * no wire format: the room that owns the request's public view implements it, and the composition root provides
 * it to the actor host.
 */
export interface LifecycleBodiesShape {
  /** The renderer for the events one committed step emitted, given the row that step wrote. */
  readonly forStep: (row: DepositRequestRow, step: Step) => LifecycleBodyOf
}

export class LifecycleBodies extends Context.Tag("deposits/LifecycleBodies")<
  LifecycleBodies,
  LifecycleBodiesShape
>() {}
