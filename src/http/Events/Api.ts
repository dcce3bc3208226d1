import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema, Struct } from "effect"
import { webhookFields } from "../../../services/depositRequests/WebhookFields"
import type { SubscribableEventType } from "../../../services/domain/Lifecycle"
import { Attention, DepositRequest, Recovery } from "../DepositRequests/Api"
import { Authentication } from "../Security"
import { InvalidRequest, InvalidState, NotFound, RateLimited, Unauthenticated } from "../Errors"
import { Id } from "../../../services/domain/PrefixedId"
import { exampleId, IdParam, Limit, ListOf, StrictStruct, withExample } from "../Schemas"

/** The deposit request in a webhook: exactly the spec's subset of the API's deposit request, same names and forms. */
export const WebhookDepositRequest = Schema.Struct(
  Struct.pick(DepositRequest.fields, ...webhookFields)
).annotations({
  identifier: "WebhookDepositRequest",
  description:
    "The deposit request as it stood when the event happened: a subset of the API's, never the merchant-only fields."
})

const envelope = {
  id: Schema.String.annotations({ description: "The `evt_` id; equals the `Service-Event-Id` header." }),
  occurred_at: Schema.String.annotations({ description: "RFC 3339 UTC, second precision, Z." })
}

/** When each deposit-request event is emitted (the spec's table); each carries `data.deposit_request`. */
const depositRequestEvents = {
  "deposit_request.ready": "The payer attested their wallet and the one-time address exists.",
  "verification.approved":
    "The payer policy was satisfied: a mailbox proven, or a merchant-session secret exchanged.",
  "deposit_request.deposited": "Finalized credits reached the amount. Settlement is queued. At most once.",
  "deposit_request.settled": "Exactly the amount reached the payout address. At most once.",
  "deposit_request.expired": "The deadline passed before settlement. At most once.",
  "deposit_request.returned": "The whole balance went back to the payer's wallet after expiry. At most once.",
  "deposit_request.likely_unsolicited":
    "Finalized funds first arrived from a wallet other than the attested one.",
  "deposit_request.needs_attention":
    "Automatic movement paused; `data.attention` is the request's `attention` object as the API shows it. At most once."
} as const

const eventName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")}Event`

const depositRequestEvent = <T extends keyof typeof depositRequestEvents>(type: T) =>
  Schema.Struct({
    ...envelope,
    type: Schema.Literal(type),
    data: Schema.Struct({ deposit_request: WebhookDepositRequest })
  }).annotations({ identifier: eventName(type), description: depositRequestEvents[type] })

export const NeedsAttentionEvent = Schema.Struct({
  ...envelope,
  type: Schema.Literal("deposit_request.needs_attention"),
  data: Schema.Struct({ deposit_request: WebhookDepositRequest, attention: Attention })
}).annotations({
  identifier: eventName("deposit_request.needs_attention"),
  description: depositRequestEvents["deposit_request.needs_attention"]
})

export const RecoveredFundsEvent = Schema.Struct({
  ...envelope,
  type: Schema.Literal("deposit_request.recovered_funds"),
  data: Schema.Struct({ deposit_request: WebhookDepositRequest, recovery: Recovery })
}).annotations({
  identifier: eventName("deposit_request.recovered_funds"),
  description:
    "Funds went back to the payer's wallet: an overpayment remainder, an expired balance or a late transfer. One event per amount returned, so it can occur several times per request; `data.deposit_request.status` can stay `settled`."
})

export const WebhookTestEvent = Schema.Struct({
  ...envelope,
  type: Schema.Literal("webhook.test"),
  data: Schema.Struct({
    webhook_id: Schema.String.annotations({ description: "The `wh_` endpoint the test was sent to." })
  })
}).annotations({
  identifier: eventName("webhook.test"),
  description: "Sent on request to one endpoint (`POST /v1/webhooks/{id}/test`). Carries no deposit request."
})

/** Every event type fanned out is one an endpoint can subscribe to (`enabled_events`), and the other way round. */
type FannedOut = keyof typeof depositRequestEvents | "deposit_request.recovered_funds"
const _sameTypes: [
  Exclude<FannedOut, SubscribableEventType>,
  Exclude<SubscribableEventType, FannedOut>
] extends [never, never]
  ? true
  : false = true
void _sameTypes

/** Every event type, in the order of the `Event` union. */
export const eventTypes = [
  ...(Object.keys(depositRequestEvents) as Array<keyof typeof depositRequestEvents>),
  "deposit_request.recovered_funds",
  "webhook.test"
] as const

/** Every event, told apart by `type`: exactly the body every delivery of the event sends. */
export const Event = Schema.Union(
  depositRequestEvent("deposit_request.ready"),
  depositRequestEvent("verification.approved"),
  depositRequestEvent("deposit_request.deposited"),
  depositRequestEvent("deposit_request.settled"),
  depositRequestEvent("deposit_request.expired"),
  depositRequestEvent("deposit_request.returned"),
  RecoveredFundsEvent,
  depositRequestEvent("deposit_request.likely_unsolicited"),
  NeedsAttentionEvent,
  WebhookTestEvent
).annotations({
  identifier: "Event",
  description:
    "Exactly the body every delivery of the event sends, told apart by `type`. Verify the `Service-Signature` header over the raw bytes before parsing."
})

export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events")
      .setUrlParams(
        Schema.Struct({
          type: Schema.optional(Schema.String),
          deposit_request_id: Schema.optional(Id("dr")),
          limit: Limit,
          starting_after: Schema.optional(Id("evt"))
        })
      )
      .addSuccess(ListOf("events", Event))
      .annotate(
        OpenApi.Summary,
        "List events, newest first (kept at least 30 days), to catch up after missed deliveries"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/events/:id")
      .setPath(Schema.Struct({ id: IdParam("evt") }))
      .addSuccess(Event)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read an event: the body every delivery of it sends")
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/events/:id/redeliver")
      .setPath(Schema.Struct({ id: IdParam("evt") }))
      .setPayload(withExample(StrictStruct({ webhook_id: Id("wh") }), { webhook_id: exampleId("wh") }))
      .addSuccess(Schema.Struct({ event_id: Schema.String, webhook_id: Schema.String }), { status: 202 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(
        OpenApi.Summary,
        "Deliver an event again to one endpoint: a new attempt series, same id and bytes"
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication) {}
