import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { Accounts } from "../../../services/merchants/Accounts"
import { AccountSummary, canonicalTimeZone } from "../../../services/depositRequests/AccountSummary"
import { Api } from "../Api"
import { CurrentIdentity, requireSession } from "../middleware/Authentication"
import { InvalidRequest, NotFound } from "../Errors"
import { afterChange, recordChange } from "../middleware/AuditTrail"
import { requestClient } from "../middleware/SignInTransport"
import { toId } from "../../../services/domain/PrefixedId"

const bearerToken = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
  (request.headers.authorization ?? "").slice("Bearer ".length)
)

export const AccountLive = HttpApiBuilder.group(Api, "account", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const summaries = yield* AccountSummary
    return handlers
      .handle("get", () =>
        Effect.gen(function* () {
          const identity = yield* CurrentIdentity
          const account = yield* accounts.get(identity.accountId)
          if (Option.isNone(account)) return yield* NotFound.of("account")
          return {
            id: toId("acct", account.value.id),
            name: account.value.name,
            environment: account.value.environment,
            created_at: account.value.createdAt
          }
        })
      )
      .handle("summary", ({ urlParams }) =>
        Effect.gen(function* () {
          const identity = yield* CurrentIdentity
          const zone = canonicalTimeZone(urlParams.time_zone ?? "UTC")
          if (zone === undefined)
            return yield* new InvalidRequest({
              message: "'time_zone' must be an IANA time zone name, such as America/Los_Angeles or UTC.",
              param: "time_zone"
            })
          return yield* summaries.summary(identity.accountId, zone)
        })
      )
      .handle("getApiKey", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession("Key management")
          const info = yield* accounts.keyInfo(identity.accountId)
          return {
            active: info.active && { last4: info.active.last4, created_at: info.active.createdAt },
            previous: info.previous && { last4: info.previous.last4, valid_until: info.previous.validUntil }
          }
        })
      )
      .handle("issueApiKey", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession("Key management")
          const who = yield* requestClient
          const issued = yield* accounts.issueApiKey(identity.accountId)
          const action = issued.previousKeyValidUntil === null ? "api_key.created" : "api_key.rotated"
          yield* recordChange(identity, who, action, `…${issued.last4}`)
          return {
            api_key: issued.apiKey,
            last4: issued.last4,
            created_at: issued.createdAt,
            previous_key_expires_at: issued.previousKeyValidUntil
          }
        })
      )
      .handle("revokeApiKey", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession("Key management")
          yield* accounts.revokeApiKeys(identity.accountId).pipe(afterChange("api_key.revoked", () => null))
        })
      )
      .handle("refreshSession", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession("Key management")
          const token = yield* bearerToken
          const request = yield* HttpServerRequest.HttpServerRequest
          // The same member keeps signing in: the fresh session is theirs, from the same browser.
          const session = yield* accounts.createSession(identity.accountId, {
            ...(identity.memberId === null ? {} : { memberId: identity.memberId }),
            ...(request.headers["user-agent"] === undefined
              ? {}
              : { userAgent: request.headers["user-agent"] })
          })
          yield* accounts.endSession(token)
          return { session_token: session.token, expires_at: session.expiresAt }
        })
      )
      .handle("endSession", () =>
        Effect.gen(function* () {
          yield* requireSession("Key management")
          yield* accounts.endSession(yield* bearerToken)
        })
      )
  })
)
