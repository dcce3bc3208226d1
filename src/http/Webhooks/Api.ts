import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import {
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  Unauthenticated
} from "../Errors"
import { Id } from "../../../services/domain/PrefixedId"
import { IdParam, Limit, ListOf, StrictStruct, withExample } from "../Schemas"
import { subscribableEventTypes } from "../../../services/domain/Lifecycle"

const EnabledEvents = Schema.Array(Schema.Literal("*", ...subscribableEventTypes))
  .pipe(Schema.minItems(1), Schema.maxItems(subscribableEventTypes.length))
  .annotations({
    // storedEventTypes (WebhookEndpoints.ts) refuses `*` beside a type; the document says so too.
    jsonSchema: { not: { type: "array", contains: { const: "*" }, minItems: 2 } },
    description:
      'The event types delivered to the endpoint, or `["*"]` for every type (the default). `webhook.test` is always delivered to the endpoint it was sent to, and a redelivery to the endpoint named.'
  })

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  enabled_events: Schema.Array(Schema.String).annotations({
    description: 'The event types delivered, or `["*"]`: every type.'
  }),
  created_at: Schema.String,
  disabled_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookEndpoint" })

export const CreatedWebhookEndpoint = Schema.Struct({
  ...WebhookEndpoint.fields,
  secret: Schema.String.annotations({
    description:
      "`whsec_…`: the signing secret, in this answer only. `POST /v1/webhooks/{id}/rotate-secret` replaces it."
  })
}).annotations({ identifier: "CreatedWebhookEndpoint" })

export const RotatedWebhookEndpoint = Schema.Struct({
  ...CreatedWebhookEndpoint.fields,
  secret: Schema.String.annotations({
    description: "`whsec_…`: the new signing secret, in this answer only."
  }),
  previous_secret_expires_at: Schema.NullOr(Schema.String).annotations({
    description:
      "Until then every delivery is signed with the previous secret as well (a second `sha256=` element in `Service-Signature`); null when it ended at once."
  })
}).annotations({ identifier: "RotatedWebhookEndpoint" })

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  attempt: Schema.Number.annotations({ description: "1 to 12 within a series." }),
  redelivery: Schema.Boolean.annotations({
    description: "True for a series started by a manual redelivery."
  }),
  outcome: Schema.Literal("succeeded", "retrying", "failed", "cancelled"),
  response_status: Schema.NullOr(Schema.Number),
  error_kind: Schema.NullOr(Schema.String).annotations({
    description: "timeout, connection, dns, ssrf_refused, redirect_refused, non_2xx or tls."
  }),
  error_message: Schema.NullOr(Schema.String),
  attempted_at: Schema.String,
  duration_ms: Schema.Number,
  next_attempt_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookDelivery" })

export const WebhookDeliveryDetail = Schema.Struct({
  ...WebhookDelivery.fields,
  request: Schema.Struct({
    headers: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
      description:
        "The headers the attempt sent, `service-signature` included (it proves nothing without the secret); null for attempts recorded before they were kept, and for a listener's (its CLI sent them)."
    }),
    body: Schema.String.annotations({
      description: "The exact bytes sent and signed (UTF-8): the event, the same on every attempt."
    })
  }),
  response: Schema.NullOr(
    Schema.Struct({
      status: Schema.Number,
      body: Schema.NullOr(Schema.String).annotations({
        description:
          "The first 4096 characters of the answer's body; null for attempts recorded before bodies were kept."
      }),
      body_truncated: Schema.Boolean.annotations({ description: "True when the answer's body was longer." })
    })
  ).annotations({ description: "The endpoint's answer; null when none came (see `error_kind`)." })
}).annotations({ identifier: "WebhookDeliveryDetail" })

/**
 * The rules of WebhookUrlRules.ts that need no resolution: https, a dotted host, no credentials, no fragment. The
 * scheme in any case, as the URL parser reads it.
 */
const HTTPS = "[hH][tT][tT][pP][sS]://"
const WEBHOOK_URL_PATTERN = `^${HTTPS}[^/?#@\\s]+\\.[^/?#@\\s]+([/?][^#\\s]*)?$`

const idPath = Schema.Struct({ id: IdParam("wh") })
const page = Schema.Struct({ limit: Limit, starting_after: Schema.optional(Id("wh")) })

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(
        withExample(
          StrictStruct({
            url: Schema.String.pipe(Schema.maxLength(2048)).annotations({
              description:
                "An `https://` URL naming a public host (a dotted name, not an IP address), without credentials or fragment. The name must resolve to public addresses only: checked at creation and before every delivery (the one rule a schema cannot hold).",
              jsonSchema: {
                type: "string",
                maxLength: 2048,
                format: "uri",
                pattern: WEBHOOK_URL_PATTERN,
                not: { pattern: `^${HTTPS}(\\d+\\.){3}\\d+([:/?]|$)` }
              }
            }),
            enabled_events: Schema.optional(EnabledEvents)
          }),
          {
            url: "https://shop.example.com/webhooks/deposits",
            enabled_events: ["deposit_request.settled", "deposit_request.needs_attention"]
          }
        )
      )
      .addSuccess(CreatedWebhookEndpoint, { status: 201 })
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Register a webhook endpoint (HTTPS, public address)")
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .setUrlParams(page)
      .addSuccess(ListOf("webhooks", WebhookEndpoint))
      .annotate(OpenApi.Summary, "List webhook endpoints, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/:id")
      .setPath(idPath)
      .addSuccess(WebhookEndpoint)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read a webhook endpoint (never its secret)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhooks/:id")
      .setPath(idPath)
      .setPayload(
        withExample(
          StrictStruct({
            enabled_events: Schema.optional(Schema.NullOr(EnabledEvents)).annotations({
              description: 'The new filter; `null` clears it to `["*"]`. Omitted: unchanged.'
            })
          }),
          { enabled_events: ["deposit_request.settled"] }
        )
      )
      .addSuccess(WebhookEndpoint)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Change which event types an endpoint receives")
      .annotate(
        OpenApi.Description,
        "Events that happen after the change follow it; deliveries already scheduled go on. A disabled endpoint answers 409 `invalid_state`."
      )
  )
  .add(
    HttpApiEndpoint.post("disable", "/webhooks/:id/disable")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Disable an endpoint: nothing more is delivered; its history stays readable")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:id/rotate-secret")
      .setPath(idPath)
      .setPayload(
        withExample(
          StrictStruct({
            expires_in_hours: Schema.optional(
              Schema.Number.pipe(Schema.int(), Schema.between(0, 168)).annotations({
                description:
                  "Hours the previous secret keeps signing beside the new one, 0 to 168 (default 24). 0 ends it at once."
              })
            )
          }),
          { expires_in_hours: 24 }
        )
      )
      .addSuccess(RotatedWebhookEndpoint)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .annotate(
        OpenApi.Summary,
        "Roll an endpoint's signing secret, the previous one signing too until it expires"
      )
      .annotate(
        OpenApi.Description,
        "Answers the endpoint with its new secret, shown once. Every delivery is signed with each live secret (at most two); rotating again while a previous secret is live ends that one at once."
      )
  )
  .add(
    HttpApiEndpoint.post("test", "/webhooks/:id/test")
      .setPath(idPath)
      .addSuccess(Schema.Struct({ event_id: Schema.String }), { status: 202 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(OpenApi.Summary, "Queue a webhook.test event to this endpoint only")
      .annotate(
        OpenApi.Description,
        "Answers 202 with the `evt_` id of the queued event; its attempts appear in the endpoint's deliveries."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries")
      .setPath(idPath)
      .setUrlParams(
        Schema.Struct({
          limit: Limit,
          starting_after: Schema.optional(Id("whd")),
          outcome: Schema.optional(Schema.Literal("succeeded", "failed")).annotations({
            description:
              "`succeeded`: only attempts that succeeded. `failed`: only attempts that did not (outcome `retrying`, `failed` or `cancelled`: each got an error or a non-2xx answer)."
          })
        })
      )
      .addSuccess(ListOf("deliveries", WebhookDelivery))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The delivery log of an endpoint: one row per attempt, newest first")
  )
  .add(
    HttpApiEndpoint.get("delivery", "/webhooks/:id/deliveries/:delivery_id")
      .setPath(Schema.Struct({ id: IdParam("wh"), delivery_id: IdParam("whd") }))
      .addSuccess(WebhookDeliveryDetail)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "One delivery attempt with the request it sent and the start of the answer")
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Signed webhook deliveries: endpoints, tests and the delivery log.") {}
