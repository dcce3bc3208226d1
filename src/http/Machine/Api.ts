import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import { RateLimited, ServiceUnavailable, Unauthenticated } from "../Errors"

const Coordinate = Schema.Number.annotations({ description: "SVG user units, from the drawing's top left." })
const Point = Schema.Struct({ x: Coordinate, y: Coordinate })
const BoxFields = { x: Coordinate, y: Coordinate, width: Coordinate, height: Coordinate }

export const MachineState = Schema.Struct({
  id: Schema.String.annotations({ description: "The state node's id, such as `depositRequest.ready`." }),
  path: Schema.String.annotations({
    description: "Its path below the machine, dot-separated (`ready`), as a snapshot's `value` names it."
  }),
  key: Schema.String,
  parent: Schema.NullOr(Schema.String).annotations({
    description: "The containing state's id; null for a top-level state."
  }),
  type: Schema.Literal("atomic", "compound", "parallel", "final", "history"),
  initial: Schema.Boolean.annotations({ description: "The state its parent (or the machine) enters first." }),
  depth: Schema.Number,
  description: Schema.NullOr(Schema.String),
  ...BoxFields
}).annotations({ identifier: "MachineState" })

export const MachineTransition = Schema.Struct({
  id: Schema.String.annotations({
    description: "`<source path>:<event>:<order>:<target index>`, stable while the definition is."
  }),
  source: Schema.String.annotations({ description: "The source state's id." }),
  target: Schema.String.annotations({
    description: "The target state's id (the source itself when targetless)."
  }),
  event: Schema.String,
  guard: Schema.NullOr(Schema.String).annotations({ description: "The named guard; null when none." }),
  actions: Schema.Array(Schema.String),
  order: Schema.Number.annotations({
    description: "Its place among the source's transitions for this event: guards are tried in this order."
  }),
  targetless: Schema.Boolean.annotations({
    description: "Stays in its state (its actions still run); drawn as a loop."
  }),
  label: Schema.Struct({ lines: Schema.Array(Schema.String), ...BoxFields }),
  points: Schema.Array(Point).annotations({ description: "Start, bends and end of the routed edge." }),
  group: Schema.NullOr(Schema.String).annotations({
    description:
      "The group it is drawn in (its points through the group's junction, its label a row of the group's list); null when drawn on its own."
  })
}).annotations({ identifier: "MachineTransition" })

export const TransitionGroup = Schema.Struct({
  id: Schema.String,
  event: Schema.String,
  kind: Schema.Literal("into", "out").annotations({
    description: "`into`: the members share their target (`state`); `out`: they share their source."
  }),
  state: Schema.String.annotations({ description: "The shared target or source state's id." }),
  members: Schema.Array(Schema.String).annotations({ description: "The member transitions' ids." }),
  label: Schema.Struct({ lines: Schema.Array(Schema.String), ...BoxFields }),
  junction: Point,
  points: Schema.Array(Point).annotations({
    description: "The shared part of the edge: junction to target (into) or source to junction (out)."
  })
}).annotations({
  identifier: "TransitionGroup",
  description:
    "Many transitions on one event into one state, or out of one, drawn as one edge through a junction with a count; the members are listed under its label."
})

export const LifecycleMachine = Schema.Struct({
  object: Schema.Literal("lifecycle_machine"),
  machine_id: Schema.String,
  machine_version: Schema.Number.annotations({
    description: "The version of the persisted snapshots' shape (a migration rewrites them when it changes)."
  }),
  digest: Schema.String.annotations({
    description: "SHA-256 of the definition: changes whenever the drawing may."
  }),
  width: Coordinate,
  height: Coordinate,
  states: Schema.Array(MachineState),
  transitions: Schema.Array(MachineTransition),
  groups: Schema.Array(TransitionGroup),
  initial: Schema.Array(
    Schema.Struct({
      parent: Schema.String.annotations({ description: "The machine's or the compound state's id." }),
      target: Schema.String,
      dot: Point,
      points: Schema.Array(Point)
    })
  ).annotations({ description: "An arrow from a dot into each initial state." })
}).annotations({ identifier: "LifecycleMachine" })

// The top of a machine config always names itself, its first state and its states; the rest is open, as xstate's.
export const MachineDefinition = Schema.Struct(
  {
    id: Schema.String,
    initial: Schema.String,
    states: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
      description: "Each state node's configuration by its key."
    })
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({
  identifier: "MachineDefinition",
  description:
    "The configuration the machine was created from (`createMachine`'s argument), guards and actions by name, " +
    "implementations left out: what Stately's tools import and the Stately inspector receives as a definition."
})

export class MachineApi extends HttpApiGroup.make("machine")
  .add(
    HttpApiEndpoint.get("graph", "/lifecycle/machine")
      .addSuccess(LifecycleMachine)
      .annotate(OpenApi.Summary, "The deposit request lifecycle, drawn: states, transitions and their layout")
      .annotate(
        OpenApi.Description,
        "Read from the machine's own definition and laid out by ELK's layered algorithm in the service, once " +
          "per machine version. The inspector draws it as SVG."
      )
  )
  .add(
    HttpApiEndpoint.get("definition", "/lifecycle/machine/definition")
      .addSuccess(MachineDefinition)
      .annotate(OpenApi.Summary, "The lifecycle machine's definition, for Stately's tools")
      .annotate(
        OpenApi.Description,
        "Answered as a download (`deposit-request-machine.json`); `createMachine` rebuilds the same states and " +
          "transitions from it."
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(ServiceUnavailable)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "The lifecycle machine every deposit request runs. Nothing in it is secret (the docs show its transition " +
      "table), but it is served to the account's credentials like every inspector route."
  ) {}
