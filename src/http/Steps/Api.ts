import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import { DepositRequestStatus, LongPollTimeout } from "../DepositRequests/Api"
import { InvalidRequest, NotFound, RateLimited, Unauthenticated } from "../Errors"
import { DecimalInteger, IdParam } from "../Schemas"
import { STEP_SEARCH_PATTERN } from "../../../services/domain/StepSearch"

const Json = Schema.Unknown.annotations({ description: "Any JSON value." })

const StateValue = Schema.Union(
  Schema.String,
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({
  identifier: "StateValue",
  description:
    "XState's state value: a state's name, or an object naming the child state of a compound state."
})

const Instant = Schema.String.annotations({
  description: "When the step committed: ISO 8601, UTC, with milliseconds (the commit's one instant)."
})

export const Transition = Schema.Struct({
  source: Schema.String.annotations({ description: "The id of the state node the transition leaves." }),
  targets: Schema.Array(Schema.String).annotations({
    description: "The ids of the state nodes it enters; empty for a transition that stays (actions only)."
  }),
  event: Schema.String.annotations({ description: "The event type the transition is taken on." }),
  guard: Schema.NullOr(Schema.String).annotations({
    description:
      "The guard that passed, by its name in the machine (`a and b`, `not a` for combinators); null when unguarded."
  })
}).annotations({ identifier: "StepTransition" })

export const RequestStep = Schema.Struct({
  version: Schema.Number.annotations({ description: "The request's version this step produced." }),
  event_id: Schema.String.annotations({
    description: "The id the event was deduplicated by (`create` for version 1)."
  }),
  event: Schema.Struct(
    { type: Schema.String },
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  ).annotations({
    description:
      'The event as applied: its type and full payload. Version 1\'s is `{ "type": "xstate.init" }`.'
  }),
  at: Instant,
  instance: Schema.String.annotations({ description: "The service instance that applied the step." }),
  status_before: Schema.NullOr(DepositRequestStatus),
  status_after: DepositRequestStatus,
  state_before: Schema.NullOr(StateValue),
  state_after: StateValue,
  transition: Schema.NullOr(Transition).annotations({
    description:
      "The transition the machine took, found from its definition with XState's own selection; null when the event changed nothing (no transition was enabled), for version 1, and when the snapshot before is not kept."
  }),
  emitted: Schema.Struct({
    lifecycle: Schema.Array(Schema.String).annotations({ description: "Lifecycle event types emitted." }),
    commands: Schema.Array(Schema.String).annotations({ description: "Command types emitted." }),
    events: Schema.Array(
      Schema.Struct({
        id: Schema.String.annotations({ description: "The event's id (`evt_…`), as webhooks deliver it." }),
        type: Schema.String
      })
    ).annotations({ description: "The lifecycle events the step's commit stored, by id." })
  }),
  snapshot_before: Schema.NullOr(Json).annotations({
    description: "The persisted snapshot before the step (the previous kept step's); null for the first kept."
  }),
  snapshot_after: Json.annotations({
    description: "The persisted snapshot at this version, as the row held it."
  }),
  context_changes: Schema.Array(
    Schema.Struct({
      path: Schema.String.annotations({
        description:
          "Dotted path in the context. List entries with an identity are named by it (`pending[command_id=…]`, `credit_ids[=…]`), others by index."
      }),
      change: Schema.Literal("added", "removed", "changed").annotations({
        description:
          "`added` or `removed` for a value (or list entry) only after or only before the step, `changed` otherwise."
      }),
      before: Json,
      after: Json
    })
  ).annotations({
    description:
      "Every context value the step changed (absent values are null); list entries paired by identity, so an entry replaced by another is one removal and one addition."
  })
}).annotations({ identifier: "RequestStep" })

export const RequestSteps = Schema.Struct({
  object: Schema.Literal("list"),
  deposit_request_id: Schema.String,
  machine_version: Schema.Number.annotations({
    description: "The machine version of the request's snapshot."
  }),
  retained_from_version: Schema.NullOr(Schema.Number).annotations({
    description:
      "The first version the history still holds: 1 when it is whole, higher once older steps were swept (`STEP_HISTORY_DAYS`); null when none is kept."
  }),
  data: Schema.Array(RequestStep).annotations({
    description: "The steps after `after_version`, in version order, at most 500: ask again after the last."
  })
}).annotations({ identifier: "RequestSteps" })

export const FeedStep = Schema.Struct({
  deposit_request_id: Schema.String,
  version: Schema.Number,
  event_type: Schema.String,
  status_before: Schema.NullOr(DepositRequestStatus),
  status_after: DepositRequestStatus,
  at: Instant,
  instance: Schema.String
}).annotations({ identifier: "FeedStep" })

export const StepFeed = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(FeedStep).annotations({ description: "Steps in commit order, newest last." }),
  next_cursor: Schema.String.annotations({
    description: "Pass as `after` to read (or wait for) the steps after these."
  })
}).annotations({ identifier: "StepFeed" })

export const StepLocation = Schema.Struct({
  object: Schema.Literal("step_location"),
  deposit_request_id: Schema.String,
  version: Schema.Number.annotations({ description: "The step to open: the version it produced." }),
  matched: Schema.Literal(
    "deposit_request",
    "event",
    "webhook_delivery",
    "transaction_hash",
    "credit"
  ).annotations({
    description:
      "What the search was taken as: a request (its latest step), an event or a webhook delivery (the step that emitted the event), a transaction hash or a credit (the step whose event carried it)."
  })
}).annotations({ identifier: "StepLocation" })

const StatelyEvent = Schema.Struct(
  {
    type: Schema.Literal("@xstate.actor", "@xstate.event", "@xstate.snapshot"),
    sessionId: Schema.String,
    rootId: Schema.String,
    id: Schema.String,
    createdAt: Schema.String,
    _version: Schema.String
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({
  identifier: "StatelyInspectionEvent",
  description:
    "An inspection event in `@statelyai/inspect`'s shape: `@xstate.actor` (with `name`, `definition`, `snapshot`), `@xstate.event` (`event`) or `@xstate.snapshot` (`event`, `snapshot`)."
})

const WaitForChange = Schema.optional(Schema.Literal("change"))

const stepsPath = Schema.Struct({ id: IdParam("dr") })

export class StepsApi extends HttpApiGroup.make("steps")
  .add(
    HttpApiEndpoint.get("requestSteps", "/deposit-requests/:id/steps")
      .setPath(stepsPath)
      .setUrlParams(
        Schema.Struct({
          after_version: Schema.optional(
            DecimalInteger(
              0,
              999_999_999,
              "Only the steps after this version (default 0: the whole kept history)."
            )
          ),
          wait_for: WaitForChange.annotations({
            description:
              "`change`: answers at once when there are steps after `after_version`; otherwise holds the request until the request's next commit (or the timeout) and answers what is there then."
          }),
          timeout: LongPollTimeout
        })
      )
      .addSuccess(RequestSteps)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The step history of a deposit request's lifecycle machine")
      .annotate(
        OpenApi.Description,
        "Every event the request's machine applied, kept for `STEP_HISTORY_DAYS`, each with the snapshots before and after, the transition taken (with the guard that passed), what it emitted and the context it changed. Version 1 is the create."
      )
  )
  .add(
    HttpApiEndpoint.get("statelyExport", "/deposit-requests/:id/steps/stately")
      .setPath(stepsPath)
      .addSuccess(Schema.Array(StatelyEvent))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Download a request's history as Stately inspection events")
      .annotate(
        OpenApi.Description,
        "The kept history as the events Stately's inspector takes (`@xstate.actor` with the machine's definition, then an `@xstate.event` and an `@xstate.snapshot` per step), as a JSON attachment."
      )
  )
  .add(
    HttpApiEndpoint.get("findStep", "/lifecycle/steps/find")
      .setUrlParams(
        Schema.Struct({
          q: Schema.String.pipe(Schema.maxLength(200)).annotations({
            // Checked by the handler (recogniseStepSearch), which names what it takes; the document says it too.
            jsonSchema: { maxLength: 200, pattern: STEP_SEARCH_PATTERN },
            description:
              "A request (`dr_…`), event (`evt_…`) or webhook delivery (`whd_…`) id, a transaction hash (`0x` and 64 hex digits) or a credit id (`<chain id>:<transaction hash>:<log index>`)."
          })
        })
      )
      .addSuccess(StepLocation)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Find the step an id or a transaction hash leads to")
      .annotate(
        OpenApi.Description,
        "The inspector's search: which request and step an id, a transaction hash or a credit names, in the account's requests only (another account's id is not found)."
      )
  )
  .add(
    HttpApiEndpoint.get("accountSteps", "/lifecycle/steps")
      .setUrlParams(
        Schema.Struct({
          after: Schema.optional(
            Schema.String.pipe(Schema.pattern(/^(0|[1-9]\d{0,17})$/, { message: () => "must be a cursor" }))
          ).annotations({
            description: "A `next_cursor`: only the steps after it. Without it, the latest `limit` steps."
          }),
          status: Schema.optional(DepositRequestStatus).annotations({
            description: "Only steps that left a request in this status."
          }),
          limit: Schema.optionalWith(
            DecimalInteger(1, 200, "At most this many steps, 1 to 200 (default 50)."),
            { default: () => 50 }
          ),
          wait_for: WaitForChange.annotations({
            description:
              "`change`: answers at once when there are steps to answer; otherwise holds the request until the account's next step (on any instance) or the timeout. A step of another status ends the wait with an empty page."
          }),
          timeout: LongPollTimeout
        })
      )
      .addSuccess(StepFeed)
      .annotate(OpenApi.Summary, "The account's lifecycle steps across all its requests, live")
      .annotate(
        OpenApi.Description,
        "Every step of every request of the account, in commit order, from every instance of the service. Another account's steps are never listed."
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Lifecycle steps: what each request's machine did, for the inspector (history, live feed, Stately export)."
  ) {}
