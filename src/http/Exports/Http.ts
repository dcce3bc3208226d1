import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { RequestExport } from "../../../services/depositRequests/RequestExport"
import { recogniseSearch } from "../../../services/domain/ListSearch"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"

export const ExportsLive = HttpApiBuilder.group(Api, "exports", (handlers) =>
  Effect.gen(function* () {
    const exports = yield* RequestExport
    return handlers.handleRaw("depositRequestsCsv", ({ urlParams }) =>
      Effect.gen(function* () {
        const { accountId } = yield* CurrentIdentity
        // The contract refused what is not recognised, so this is a search whenever q is given.
        const recognised = urlParams.q === undefined ? undefined : recogniseSearch(urlParams.q)
        const search = typeof recognised === "string" ? undefined : recognised
        const day = new Date().toISOString().slice(0, 10)
        return HttpServerResponse.stream(
          exports.csv(accountId, {
            status: urlParams.status,
            createdGte: urlParams.created_gte,
            createdLt: urlParams.created_lt,
            reference: urlParams.reference,
            search,
            customer: urlParams.customer,
            depositAddress: urlParams.deposit_address,
            payerWallet: urlParams.payer_wallet,
            transactionHash: urlParams.transaction_hash
          }),
          {
            contentType: "text/csv; charset=utf-8",
            headers: {
              "content-disposition": `attachment; filename="deposit-requests-${day}.csv"`,
              "cache-control": "no-store"
            }
          }
        )
      })
    )
  })
)
