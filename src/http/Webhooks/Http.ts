import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WebhookEndpoints } from "../../../services/webhooks/WebhookEndpoints"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"
import { NotFound } from "../Errors"
import { withChange } from "../middleware/AuditTrail"
import type { Event } from "../Events/Api"
import { uuidFromId } from "../../../services/domain/PrefixedId"

const requireId = (id: string) => {
  const uuid = uuidFromId("wh", id)
  return uuid === undefined ? Effect.fail(NotFound.of("webhook")) : Effect.succeed(uuid)
}
const after = (id: string | undefined) => (id === undefined ? undefined : id.slice(id.indexOf("_") + 1))

export const WebhooksLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* WebhookEndpoints
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          webhooks
            .create(accountId, payload.url, payload.enabled_events)
            .pipe(withChange("webhook_endpoint.created", (w) => w.id))
        )
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          webhooks.list(accountId, urlParams.limit, after(urlParams.starting_after))
        )
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) => webhooks.get(accountId, u))
        )
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) =>
            webhooks.update(accountId, u, payload).pipe(withChange("webhook_endpoint.updated", () => path.id))
          )
        )
      )
      .handle("delivery", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) => {
            const d = uuidFromId("whd", path.delivery_id)
            return d === undefined
              ? Effect.fail(NotFound.of("webhook_delivery"))
              : webhooks.delivery(accountId, u, d)
          })
        )
      )
      .handle("disable", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) =>
            webhooks.disable(accountId, u).pipe(withChange("webhook_endpoint.disabled", () => path.id))
          )
        )
      )
      .handle("rotateSecret", ({ path, payload }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) =>
            webhooks
              .rotateSecret(accountId, u, payload.expires_in_hours ?? 24)
              .pipe(withChange("webhook_endpoint.secret_rotated", () => path.id))
          )
        )
      )
      .handle("test", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) => webhooks.sendTest(accountId, u))
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (u) =>
            webhooks.deliveries(
              accountId,
              u,
              urlParams.limit,
              after(urlParams.starting_after),
              urlParams.outcome
            )
          )
        )
      )
  })
)

export const EventsLive = HttpApiBuilder.group(Api, "events", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* WebhookEndpoints
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          webhooks.events(accountId, {
            type: urlParams.type,
            depositRequest: after(urlParams.deposit_request_id),
            limit: urlParams.limit,
            startingAfter: after(urlParams.starting_after)
          })
        ).pipe(
          // The stored bodies are what the emitters wrote; `Event` types them, and the answer is encoded through it.
          Effect.map(
            (page) =>
              page as unknown as { events: ReadonlyArray<typeof Event.Type>; next_cursor: string | null }
          )
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const eventUuid = uuidFromId("evt", path.id)
          if (eventUuid === undefined) return yield* NotFound.of("event")
          // The stored body is what its emitter wrote; `Event` types it, and the answer is encoded through it.
          return (yield* webhooks.event(accountId, eventUuid)) as unknown as typeof Event.Type
        })
      )
      .handle("redeliver", ({ path, payload }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const eventUuid = uuidFromId("evt", path.id)
          if (eventUuid === undefined) return yield* NotFound.of("event")
          yield* webhooks.redeliver(accountId, eventUuid, after(payload.webhook_id)!)
          return { event_id: path.id, webhook_id: payload.webhook_id }
        })
      )
  })
)
