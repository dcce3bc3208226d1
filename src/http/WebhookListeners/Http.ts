import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { uuidFromId } from "../../../services/domain/PrefixedId"
import { WebhookListeners } from "../../../services/webhooks/WebhookListeners"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"
import { LongPollRegistry } from "../middleware/LongPollRegistry"
import { NotFound } from "../Errors"

/** The hold of a listener's poll when the client names none, as the other long polls'. */
const DEFAULT_HOLD_SECONDS = 25

const requireId = (id: string) => {
  const uuid = uuidFromId("wh", id)
  return uuid === undefined ? Effect.fail(NotFound.of("webhook")) : Effect.succeed(uuid)
}

export const WebhookListenersLive = HttpApiBuilder.group(Api, "webhookListeners", (handlers) =>
  Effect.gen(function* () {
    const listeners = yield* WebhookListeners
    // Its finalizer runs before the HTTP server closes: a held poll then answers rather than holding the shutdown.
    const registry = yield* LongPollRegistry
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) => listeners.create(accountId, payload.event_types))
      )
      .handle("reopen", ({ path, payload }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (uuid) => listeners.reopen(accountId, uuid, payload.event_types))
        )
      )
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (uuid) => listeners.rotateSecret(accountId, uuid))
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (uuid) =>
            listeners.poll(
              accountId,
              uuid,
              urlParams.wait_for === "change" ? (urlParams.timeout ?? DEFAULT_HOLD_SECONDS) * 1000 : 0,
              registry.closing
            )
          )
        )
      )
      .handle("answer", ({ path, payload }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (uuid) =>
            listeners.report(accountId, uuid, {
              // The schema checked the prefix.
              eventUuid: uuidFromId("evt", payload.event_id)!,
              attempt: payload.attempt,
              status: payload.status,
              error: payload.error,
              excerpt: payload.excerpt,
              durationMs: payload.duration_ms
            })
          )
        )
      )
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) =>
          Effect.flatMap(requireId(path.id), (uuid) => listeners.remove(accountId, uuid))
        )
      )
  })
)
