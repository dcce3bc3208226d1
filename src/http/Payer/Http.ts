import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { PayerFlow } from "../../../services/payer/PayerFlow"
import { Api } from "../Api"
import { longPoll } from "../middleware/LongPoll"
import { NotFound } from "../Errors"
import { PayerDepositRequest } from "./Api"
import { PublicUrl } from "../../../services/platform/PublicUrl"
import { uuidFromId } from "../../../services/domain/PrefixedId"

const requireId = (id: string) => {
  const uuid = uuidFromId("dr", id)
  return uuid === undefined ? Effect.fail(NotFound.of("deposit_request")) : Effect.succeed(uuid)
}

export const PayerLive = HttpApiBuilder.group(Api, "payer", (handlers) =>
  Effect.gen(function* () {
    const payer = yield* PayerFlow
    const { absolute } = yield* PublicUrl
    // Download links are paths of this service until here, where its public origin is known.
    const absolutize = <V extends { readonly attachments: ReadonlyArray<{ readonly download_url: string }> }>(
      view: V
    ): V => ({
      ...view,
      attachments: view.attachments.map((a) => ({ ...a, download_url: absolute(a.download_url) }))
    })
    const readAbsolute = (uuid: string) => Effect.option(Effect.map(payer.read(uuid), absolutize))
    return handlers
      .handle("read", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const uuid = yield* requireId(path.id)
          const read = readAbsolute(uuid)
          const found = yield* longPoll(urlParams, {
            wakeOn: { _tag: "Request", uuid },
            read,
            // Built when woken, so a parked poll does not keep a prepared statement.
            readAfter: Effect.suspend(() => readAbsolute(uuid)),
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
        Effect.flatMap(requireId(path.id), (uuid) =>
          Effect.map(payer.verifyMailbox(uuid, payload.code), absolutize)
        )
      )
      .handle("merchantSession", ({ path, payload }) =>
        Effect.flatMap(requireId(path.id), (uuid) =>
          Effect.map(payer.exchangeSession(uuid, payload.secret), absolutize)
        )
      )
      .handle("wallet", ({ path, payload }) =>
        Effect.flatMap(requireId(path.id), (uuid) =>
          Effect.map(payer.attestWallet(uuid, payload), absolutize)
        )
      )
  })
)
