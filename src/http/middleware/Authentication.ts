import { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import { Accounts } from "../../../services/merchants/Accounts"
import { RateLimiter } from "../../../services/platform/RateLimiter"
import { IdentityUnauthorized, RateLimited, Unauthenticated } from "../Errors"
import { Authentication, CurrentIdentity } from "../Security"

export { Authentication, CurrentIdentity } from "../Security"

/** Routes for the account's people, not its integrations: a dashboard session, never an API key. */
export const requireSession = (what: string) =>
  Effect.flatMap(CurrentIdentity, (identity) =>
    identity.via === "session"
      ? Effect.succeed(identity)
      : Effect.fail(
          new IdentityUnauthorized({
            message: `${what} accepts dashboard session tokens only, not API keys.`
          })
        )
  )

/**
 * Headers the answer to this request carries whatever it turns out to be (success or error), filled while it is
 * handled: the edge provides a fresh one per request and sets them on the answer. The rate limit's go here.
 */
export class AnswerHeaders extends Context.Tag("deposits/AnswerHeaders")<
  AnswerHeaders,
  Record<string, string>
>() {}

const refused = new Unauthenticated({
  message: "Send a valid API key or dashboard session token as `Authorization: Bearer <credential>`."
})

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const limiter = yield* RateLimiter
    return {
      bearer: () =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const header = request.headers.authorization ?? ""
          const match = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header)
          if (match?.[1] === undefined) return yield* refused
          const identity = yield* accounts.authenticate(match[1])
          if (Option.isNone(identity)) return yield* refused
          if (identity.value.via === "api_key") {
            const decision = yield* limiter.take(identity.value.accountId)
            // The edge puts them on the answer, success or error alike.
            const answer = yield* Effect.serviceOption(AnswerHeaders)
            if (Option.isSome(answer)) {
              answer.value["x-ratelimit-limit"] = String(decision.limit)
              answer.value["x-ratelimit-remaining"] = String(decision.remaining)
              answer.value["x-ratelimit-reset"] = String(decision.resetAt)
            }
            if (!decision.allowed) {
              return yield* new RateLimited({
                message: "Too many requests for this account; retry in a second."
              })
            }
          }
          return identity.value
        })
    }
  })
)
