import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../middleware/Authentication"
import { InvalidRequest, InvalidState, NotFound, RateLimited, Unauthenticated } from "../Errors"
import { Id } from "../../../services/domain/PrefixedId"
import { exampleId, IdParam, Limit, ListOf, StrictStruct, withExample } from "../Schemas"

export const Event = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  occurred_at: Schema.String,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "Event", description: "Exactly the body every delivery of the event sends." })

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
