import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import {
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  SandboxOnly,
  Unauthenticated
} from "../Errors"
import { eventTypes } from "../Events/Api"
import { Id } from "../../../services/domain/PrefixedId"
import { DecimalInteger, exampleId, IdParam, StrictStruct, withExample } from "../Schemas"

const EventType = Schema.Literal(...eventTypes)

export const WebhookListener = Schema.Struct({
  id: Schema.String.annotations({
    description: "A `wh_` id: the listener's deliveries appear in the delivery logs under it."
  }),
  event_types: Schema.NullOr(Schema.Array(Schema.String)).annotations({
    description: "The event types forwarded; null: every type."
  }),
  created_at: Schema.String,
  expires_after_idle_seconds: Schema.Number.annotations({
    description:
      "The listener is removed when no poll has come for this long (its CLI stopped without removing it)."
  })
}).annotations({ identifier: "WebhookListener" })

export const CreatedWebhookListener = Schema.Struct({
  ...WebhookListener.fields,
  secret: Schema.String.annotations({
    description:
      "`whsec_…`: the signing secret of every delivery forwarded, in this answer only. The local receiver verifies with it as with an endpoint's."
  })
}).annotations({ identifier: "CreatedWebhookListener" })

export const ListenerDelivery = Schema.Struct({
  event_id: Schema.String.annotations({ description: "The `evt_` id; the same on every attempt." }),
  event_type: Schema.String,
  attempt: Schema.Number.annotations({
    description: "1 to 12 within a series; report it back with the answer."
  }),
  body: Schema.String.annotations({
    description: "The exact bytes to POST (UTF-8): the same on every attempt, signed in `headers`."
  }),
  headers: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description:
      "The headers to send with it, as an endpoint receives them: `content-type`, `service-event-id`, `service-event-type`, `service-signature` (signed when handed out) and `user-agent`."
  })
}).annotations({ identifier: "ListenerDelivery" })

export const LocalAnswer = withExample(
  StrictStruct({
    event_id: Id("evt"),
    attempt: Schema.Number.pipe(Schema.int(), Schema.between(1, 12)),
    status: Schema.NullOr(Schema.Number.pipe(Schema.int(), Schema.between(100, 599))).annotations({
      description: "The local server's status; null when it gave none (see `error`)."
    }),
    error: Schema.NullOr(Schema.Literal("connection", "timeout")).annotations({
      description: "Why there is no status: the connection failed, or no answer came in time."
    }),
    excerpt: Schema.optional(
      Schema.String.pipe(Schema.maxLength(500)).annotations({
        description:
          "The start of the local answer's body (kept as the attempt's error message when not 2xx)."
      })
    ),
    duration_ms: Schema.Number.pipe(Schema.int(), Schema.between(0, 600_000))
  }),
  {
    event_id: exampleId("evt"),
    attempt: 1,
    status: 200,
    error: null,
    duration_ms: 12
  }
)

const idPath = Schema.Struct({ id: IdParam("wh") })

const sandboxOnly =
  "Sandbox only: a production service answers 403 `sandbox_only` and changes nothing (register an HTTPS endpoint there)."

export class WebhookListenersApi extends HttpApiGroup.make("webhookListeners")
  .add(
    HttpApiEndpoint.post("create", "/webhook-listeners")
      .setPayload(
        withExample(
          StrictStruct({
            event_types: Schema.optional(Schema.Array(EventType).pipe(Schema.minItems(1))).annotations({
              description: "Forward only these event types (default: every type)."
            })
          }),
          { event_types: ["deposit_request.ready", "deposit_request.settled"] }
        )
      )
      .addSuccess(CreatedWebhookListener, { status: 201 })
      .addError(SandboxOnly)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Open a listener: a temporary endpoint whose deliveries the CLI pulls")
      .annotate(
        OpenApi.Description,
        `What \`deposits listen\` opens to forward deliveries to a server on the merchant's machine: the service never connects to it. Events are fanned out to it as to an endpoint, with the same signature, ids and retries; the CLI takes them with the deliveries route, forwards them and reports each local answer, which is the attempt's outcome in the delivery logs. ${sandboxOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("reopen", "/webhook-listeners/:id/reopen")
      .setPath(idPath)
      .setPayload(
        withExample(
          StrictStruct({
            event_types: Schema.optional(Schema.Array(EventType).pipe(Schema.minItems(1))).annotations({
              description: "Forward only these event types from now on (default: every type)."
            })
          }),
          { event_types: ["deposit_request.settled"] }
        )
      )
      .addSuccess(WebhookListener)
      .addError(NotFound)
      .addError(SandboxOnly)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Open an earlier listener again, removed or expired, with the same secret")
      .annotate(
        OpenApi.Description,
        `What \`deposits listen\` does on its next run on the same machine and account, so the receiver's secret stays the same across runs (it is not in this answer: the CLI kept it). Events that happened while it was closed are not sent; \`POST /v1/events/{id}/redeliver\` sends one on demand. ${sandboxOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhook-listeners/:id/rotate-secret")
      .setPath(idPath)
      .addSuccess(CreatedWebhookListener)
      .addError(NotFound)
      .addError(SandboxOnly)
      .annotate(OpenApi.Summary, "Replace a live listener's signing secret; the old one stops at once")
      .annotate(
        OpenApi.Description,
        `\`deposits listen --rotate-secret\`. Unlike an endpoint's rotation there is no grace: every delivery handed out from now on is signed with the new secret only. ${sandboxOnly}`
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhook-listeners/:id/deliveries")
      .setPath(idPath)
      .setUrlParams(
        Schema.Struct({
          wait_for: Schema.optional(Schema.Literal("change")).annotations({
            description:
              "`change`: hold the request until a delivery is due, or answer an empty list at the timeout."
          }),
          timeout: Schema.optional(
            DecimalInteger(1, 30, "Seconds to hold with wait_for=change, 1 to 30 (default 25).")
          )
        })
      )
      .addSuccess(Schema.Struct({ deliveries: Schema.Array(ListenerDelivery) }))
      .addError(NotFound)
      .addError(SandboxOnly)
      .annotate(OpenApi.Summary, "Take the listener's due deliveries (keeps the listener alive)")
      .annotate(
        OpenApi.Description,
        `Each delivery handed out is the listener's until its answer is reported, or for the claim time (60 s), after which it is handed out again. Oldest event first. ${sandboxOnly}`
      )
  )
  .add(
    HttpApiEndpoint.post("answer", "/webhook-listeners/:id/answers")
      .setPath(idPath)
      .setPayload(LocalAnswer)
      .addSuccess(
        Schema.Struct({
          outcome: Schema.Literal("succeeded", "retrying", "failed"),
          next_attempt_at: Schema.NullOr(Schema.String).annotations({
            description: "When the retry is due (it comes back through the deliveries route); null: none."
          })
        })
      )
      .addError(NotFound)
      .addError(InvalidState)
      .addError(SandboxOnly)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Report the local answer to a forwarded delivery: the attempt's outcome")
      .annotate(
        OpenApi.Description,
        `A 2xx status succeeds; anything else is retried on the endpoints' schedule (same event id and bytes). An attempt that is not waiting for its answer (reported already, or its claim lapsed) answers 409 \`invalid_state\`. ${sandboxOnly}`
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/webhook-listeners/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .addError(SandboxOnly)
      .annotate(
        OpenApi.Summary,
        "Remove a listener: what it had pending is cancelled; its delivery log stays"
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Local webhook forwarding in the sandbox (`deposits listen`): temporary endpoints whose deliveries the CLI pulls."
  ) {}
