import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, type Schema } from "effect"
import { StepHistory, statelyEvents } from "../../../services/depositRequests/StepHistory"
import { uuidFromId } from "../../../services/domain/PrefixedId"
import { recogniseStepSearch } from "../../../services/domain/StepSearch"
import { ChangeFeed } from "../../../services/platform/ChangeFeed"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"
import { longPoll } from "../middleware/LongPoll"
import { InvalidRequest, NotFound } from "../Errors"
import { RequestSteps, StepFeed } from "./Api"

const requireId = (id: string) => {
  const uuid = uuidFromId("dr", id)
  return uuid === undefined ? Effect.fail(NotFound.of("deposit_request")) : Effect.succeed(uuid)
}

/**
 * The shared long poll compares versions; a steps answer has none, so it gets a hidden one (not enumerable: never
 * in the JSON, and dropped by the schema's encoding) that says whether it has steps. The poll is asked for the
 * version "none": an answer with steps is sent at once, an empty one waits for the next change.
 */
const NONE = "none"
const withPollVersion = <A extends { readonly data: ReadonlyArray<unknown> }>(answer: A) =>
  Object.defineProperty({ ...answer }, "version", {
    value: answer.data.length > 0 ? "some" : NONE,
    enumerable: false
  }) as A & { readonly version: string }

/** The route's schema, for an answer that also carries the hidden version (the encoding drops it). */
const polled = <A, I>(schema: Schema.Schema<A, I>) =>
  schema as Schema.Schema<A & { readonly version: string }, I>

export const StepsLive = HttpApiBuilder.group(Api, "steps", (handlers) =>
  Effect.gen(function* () {
    const history = yield* StepHistory
    const feed = yield* ChangeFeed
    return handlers
      .handle("requestSteps", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const uuid = yield* requireId(path.id)
          const read = Effect.map(
            history.forRequest(accountId, uuid, urlParams.after_version ?? 0),
            Option.map((found) => withPollVersion({ object: "list" as const, ...found }))
          )
          const found = yield* longPoll(
            { wait_for: urlParams.wait_for, version: NONE, timeout: urlParams.timeout },
            {
              wakeOn: { _tag: "Request", uuid },
              read,
              readAfter: read,
              schema: polled(RequestSteps),
              resource: "deposit_request"
            }
          )
          if (Option.isNone(found)) return yield* NotFound.of("deposit_request")
          return found.value
        })
      )
      .handle("statelyExport", ({ path }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const uuid = yield* requireId(path.id)
          const found = yield* history.allForRequest(accountId, uuid)
          if (Option.isNone(found)) return yield* NotFound.of("deposit_request")
          return HttpServerResponse.unsafeJson(statelyEvents(found.value), {
            headers: {
              "content-disposition": `attachment; filename="${found.value.deposit_request_id}.stately.json"`,
              "cache-control": "no-store"
            }
          })
        })
      )
      .handle("findStep", ({ urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const search = recogniseStepSearch(urlParams.q)
          if (search === undefined)
            return yield* new InvalidRequest({
              message:
                "q must be a dr_, evt_ or whd_ id, a transaction hash (0x and 64 hex digits) or a credit id (chain:hash:log index).",
              param: "q"
            })
          const found = yield* history.find(accountId, search)
          if (Option.isNone(found))
            return yield* NotFound.of(
              search.kind === "evt" ? "event" : search.kind === "whd" ? "webhook_delivery" : "deposit_request"
            )
          return { object: "step_location" as const, ...found.value }
        })
      )
      .handle("accountSteps", ({ urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const options = {
            accountId,
            after: urlParams.after === undefined ? undefined : BigInt(urlParams.after),
            status: urlParams.status,
            limit: urlParams.limit
          }
          const read = Effect.map(history.feed(options), (page) =>
            Option.some(withPollVersion({ object: "list" as const, ...page }))
          )
          const found = yield* longPoll(
            { wait_for: urlParams.wait_for, version: NONE, timeout: urlParams.timeout },
            {
              wakeOn: {
                _tag: "AfterRead",
                // Subscribed once the page is read: a step committed since the read wakes the poll at once.
                subscribe: (page, wake) =>
                  Effect.gen(function* () {
                    const cancel = feed.subscribeStepped(accountId, wake)
                    const newer = yield* history
                      .feedHasAfter(accountId, BigInt(page.next_cursor))
                      .pipe(Effect.onError(() => Effect.sync(cancel)))
                    if (newer) wake()
                    return cancel
                  })
              },
              read,
              readAfter: read,
              schema: polled(StepFeed),
              resource: "deposit_request"
            }
          )
          // A feed is never missing.
          return Option.getOrThrow(found)
        })
      )
  })
)
