/**
 * The inspector's shapes (`/v1/lifecycle/…`, `/v1/deposit-requests/{id}/steps`), taken from the generated
 * contract as ./types.ts takes the rest: the drawing is the service's `MachineGraph`, as the contract serves it.
 */
import type { components } from "../../../client/openapi"

type Schemas = components["schemas"]

export type LifecycleMachine = Schemas["LifecycleMachine"]
export type MachineState = Schemas["MachineState"]
export type MachineTransition = Schemas["MachineTransition"]
export type TransitionGroup = Schemas["TransitionGroup"]
/** A point of a routed edge, in SVG user units. */
export type Point = MachineTransition["points"][number]
export type StateValue = Schemas["StateValue"]
export type StepTransition = Schemas["StepTransition"]
export type Step = Schemas["RequestStep"]
export type StepList = Schemas["RequestSteps"]
export type FeedStep = Schemas["FeedStep"]
export type Feed = Schemas["StepFeed"]
export type StepLocation = Schemas["StepLocation"]
