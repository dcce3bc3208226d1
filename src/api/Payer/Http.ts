import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { PayerFlow } from "../../../services/PayerFlow"
import { Api } from "../../Api"
import { longPoll } from "../../middleware/LongPoll"
import { NotFound } from "../Errors"
import { PayerDepositRequest } from "./Api"
import { uuidFromId } from "../../../services/domain/PrefixedId"

const requireId = (id: string) => {
  const uuid = uuidFromId("dr", id)
  return uuid === undefined ? Effect.fail(NotFound.of("deposit_request")) : Effect.succeed(uuid)
}

export const PayerLive = HttpApiBuilder.group(Api, "payer", (handlers) =>
  Effect.gen(function* () {
    const payer = yield* PayerFlow
    return handlers
      .handle("read", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const uuid = yield* requireId(path.id)
          const read = Effect.option(payer.read(uuid))
          const found = yield* longPoll(urlParams, {
            uuid,
            read,
            // Built when woken, so a parked poll does not keep a prepared statement.
            readAfter: Effect.suspend(() => Effect.option(payer.read(uuid))),
            schema: PayerDepositRequest,
            resource: "deposit_request"
          })
          if (Option.isNone(found)) return yield* NotFound.of("deposit_request")
          return found.value
        })
      )
      .handle("mailboxStart", ({ path }) =>
        Effect.flatMap(requireId(path.id), (uuid) => payer.startMailbox(uuid))
      )
      .handle("mailboxVerify", ({ path, payload }) =>
        Effect.flatMap(requireId(path.id), (uuid) => payer.verifyMailbox(uuid, payload.code))
      )
      .handle("merchantSession", ({ path, payload }) =>
        Effect.flatMap(requireId(path.id), (uuid) => payer.exchangeSession(uuid, payload.secret))
      )
      .handle("wallet", ({ path, payload }) =>
        Effect.flatMap(requireId(path.id), (uuid) => payer.attestWallet(uuid, payload))
      )
  })
)
