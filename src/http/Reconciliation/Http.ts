import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Reconciliation } from "../../../services/depositRequests/Reconciliation"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"

export const ReconciliationLive = HttpApiBuilder.group(Api, "reconciliation", (handlers) =>
  Effect.gen(function* () {
    const reconciliation = yield* Reconciliation
    return handlers.handle("report", ({ urlParams }) =>
      Effect.flatMap(CurrentIdentity, ({ accountId }) =>
        reconciliation.report(accountId, {
          ...(urlParams.created_from === undefined ? {} : { from: urlParams.created_from }),
          ...(urlParams.created_to === undefined ? {} : { to: urlParams.created_to }),
          limit: urlParams.limit,
          startingAfter: urlParams.starting_after
        })
      )
    )
  })
)
