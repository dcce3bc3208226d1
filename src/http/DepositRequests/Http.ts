import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { DepositRequestLedger } from "../../../services/depositRequests/DepositRequestLedger"
import { DepositRequests } from "../../../services/depositRequests/DepositRequests"
import { Api } from "../Api"
import { CurrentIdentity, requireSession } from "../middleware/Authentication"
import { longPoll } from "../middleware/LongPoll"
import { NotFound } from "../Errors"
import { DepositRequest, DepositRequestList, listTimeoutOrDefault } from "./Api"
import { uuidFromId } from "../../../services/domain/PrefixedId"
import { recogniseSearch, searchMayMatchNew } from "../../../services/domain/ListSearch"
import { uuidOfId } from "../../../services/depositRequests/CreateFields"
import { ChangeFeed } from "../../../services/platform/ChangeFeed"
import { WebhookEndpoints } from "../../../services/webhooks/WebhookEndpoints"

const requireId = (id: string) => {
  const uuid = uuidFromId("dr", id)
  return uuid === undefined ? Effect.fail(NotFound.of("deposit_request")) : Effect.succeed(uuid)
}

export const DepositRequestsLive = HttpApiBuilder.group(Api, "depositRequests", (handlers) =>
  Effect.gen(function* () {
    const requests = yield* DepositRequests
    const ledger = yield* DepositRequestLedger
    const webhooks = yield* WebhookEndpoints
    const feed = yield* ChangeFeed
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
          // The contract refused what is not recognised, so this is a search whenever q is given.
          const recognised = urlParams.q === undefined ? undefined : recogniseSearch(urlParams.q)
          const search = typeof recognised === "string" ? undefined : recognised
          const read = Effect.map(
            requests.list(accountId, {
              status: urlParams.status,
              createdGte: urlParams.created_gte,
              createdLt: urlParams.created_lt,
              reference: urlParams.reference,
              search,
              customer: urlParams.customer,
              depositAddress: urlParams.deposit_address,
              payerWallet: urlParams.payer_wallet,
              transactionHash: urlParams.transaction_hash,
              limit: urlParams.limit,
              startingAfter: urlParams.starting_after
            }),
            Option.some
          )
          // A new request is newest, so it can appear on a first page only, and only on one whose filters a request
          // without an address, wallet or transfer, created now, can pass: only such a page wakes on creates.
          const mayGainCreates =
            urlParams.starting_after === undefined &&
            urlParams.deposit_address === undefined &&
            urlParams.payer_wallet === undefined &&
            urlParams.transaction_hash === undefined &&
            (search === undefined || searchMayMatchNew(search)) &&
            (urlParams.created_lt === undefined ||
              urlParams.created_lt.getTime() > (yield* Clock.currentTimeMillis))
          const poll = { ...urlParams, timeout: listTimeoutOrDefault(urlParams.timeout) }
          const found = yield* longPoll(poll, {
            wakeOn: {
              _tag: "AfterRead",
              // The page's requests are known once it is read: subscribed to then, and checked unchanged since.
              subscribe: (page, wake) =>
                Effect.gen(function* () {
                  const cancels = page.deposit_requests.map((r) => feed.subscribe(uuidOfId(r.id), wake))
                  if (mayGainCreates) cancels.push(feed.subscribeCreated(accountId, wake))
                  const cancel = () => {
                    for (const c of cancels) c()
                  }
                  const unchanged = yield* requests
                    .pageUnchanged(page.deposit_requests)
                    .pipe(Effect.onError(() => Effect.sync(cancel)))
                  if (!unchanged) wake()
                  return cancel
                })
            },
            read,
            readAfter: read,
            schema: DepositRequestList,
            resource: "deposit_request"
          })
          // A list is never missing.
          return Option.getOrThrow(found)
        })
      )
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const found = yield* webhooks.requestDeliveries(
            accountId,
            yield* requireId(path.id),
            urlParams.limit,
            urlParams.starting_after && uuidFromId("whd", urlParams.starting_after)
          )
          return yield* Option.match(found, {
            onNone: () => Effect.fail(NotFound.of("deposit_request")),
            onSome: Effect.succeed
          })
        })
      )
      .handle("get", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          const uuid = yield* requireId(path.id)
          const found = yield* longPoll(urlParams, {
            wakeOn: { _tag: "Request", uuid },
            read: requests.get(accountId, uuid),
            readAfter: requests.getShared(accountId, uuid),
            schema: DepositRequest,
            resource: "deposit_request"
          })
          if (Option.isNone(found)) return yield* NotFound.of("deposit_request")
          return found.value
        })
      )
      .handle("resume", ({ path, payload }) =>
        Effect.gen(function* () {
          const { accountId } = yield* requireSession("Resuming a request")
          return yield* requests.resume(accountId, yield* requireId(path.id), payload)
        })
      )
      .handle("cancel", ({ path, payload }) =>
        Effect.gen(function* () {
          const { accountId } = yield* CurrentIdentity
          return yield* requests.cancel(accountId, yield* requireId(path.id), payload.reason ?? null)
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
