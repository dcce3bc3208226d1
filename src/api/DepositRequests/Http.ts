import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { DepositRequestLedger } from "../../../services/depositRequests/DepositRequestLedger"
import { DepositRequests } from "../../../services/depositRequests/DepositRequests"
import { Api } from "../../Api"
import { CurrentIdentity, requireSession } from "../../middleware/Authentication"
import { longPoll } from "../../middleware/LongPoll"
import { NotFound } from "../Errors"
import { DepositRequest } from "./Api"
import { uuidFromId } from "../../../services/domain/PrefixedId"

const requireId = (id: string) => {
  const uuid = uuidFromId("dr", id)
  return uuid === undefined ? Effect.fail(NotFound.of("deposit_request")) : Effect.succeed(uuid)
}

export const DepositRequestsLive = HttpApiBuilder.group(Api, "depositRequests", (handlers) =>
  Effect.gen(function* () {
    const requests = yield* DepositRequests
    const ledger = yield* DepositRequestLedger
    // Every transfer and recovery of one request fits one page; the cursor is always null.
    const onePage = <K extends string, A>(name: K, found: Option.Option<ReadonlyArray<A>>) =>
      Option.isNone(found)
        ? Effect.fail(NotFound.of("deposit_request"))
        : Effect.succeed({ [name]: found.value, next_cursor: null } as { [P in K]: ReadonlyArray<A> } & {
            next_cursor: null
          })
    return handlers
      .handle("create", ({ headers, payload }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const result = yield* requests.create(accountId, headers["idempotency-key"], payload)
          const body =
            result.secret === undefined
              ? result.wire
              : { ...result.wire, merchant_session_secret: result.secret }
          // `toWire` builds the schema's encoded form (a property test holds them equal), so the answer is sent as
          // is rather than re-encoded through the endpoint's two success schemas.
          return HttpServerResponse.unsafeJson(
            body,
            result.replayed ? { status: 200, headers: { "idempotency-replayed": "true" } } : { status: 201 }
          )
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          return yield* requests.list(accountId, {
            status: urlParams.status,
            limit: urlParams.limit,
            startingAfter: urlParams.starting_after
          })
        })
      )
      .handle("get", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const uuid = yield* requireId(path.id)
          const found = yield* longPoll(urlParams, {
            uuid,
            read: requests.get(accountId, uuid),
            readAfter: requests.getShared(accountId, uuid),
            schema: DepositRequest,
            resource: "deposit_request"
          })
          if (Option.isNone(found)) return yield* NotFound.of("deposit_request")
          return found.value
        })
      )
      .handle("resume", ({ path }) =>
        Effect.gen(function* () {
          const { accountId } = yield* requireSession("Resuming a request")
          return yield* requests.resume(accountId, yield* requireId(path.id))
        })
      )
      .handle("transfers", ({ path }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          return yield* onePage("transfers", yield* ledger.transfers(accountId, yield* requireId(path.id)))
        })
      )
      .handle("recoveries", ({ path }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          return yield* onePage("recoveries", yield* ledger.recoveries(accountId, yield* requireId(path.id)))
        })
      )
      .handle("verificationAttempts", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const found = yield* ledger.verificationAttempts(accountId, yield* requireId(path.id), {
            limit: urlParams.limit,
            startingAfter: urlParams.starting_after && uuidFromId("va", urlParams.starting_after)
          })
          return yield* Option.match(found, {
            onNone: () => Effect.fail(NotFound.of("deposit_request")),
            onSome: Effect.succeed
          })
        })
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          return yield* requests.update(accountId, yield* requireId(path.id), payload)
        })
      )
  })
)
