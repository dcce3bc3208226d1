import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import { InvalidRequest, NotFound, RateLimited, ServiceUnavailable, Unauthenticated } from "../Errors"
import { Timestamp } from "../../../services/domain/Timestamp"
import { Id } from "../../../services/domain/PrefixedId"
import { Limit } from "../Schemas"

const BaseUnits = Schema.String.annotations({ description: "Integer base units as a string of digits." })

export const ReconciledRequest = Schema.Struct({
  deposit_request_id: Schema.String,
  status: Schema.String,
  amount_base_units: BaseUnits,
  credited_base_units: BaseUnits.annotations({ description: "Finalized payments into the deposit address." }),
  settled_base_units: BaseUnits.annotations({ description: "Confirmed settlements to the payout address." }),
  returned_base_units: BaseUnits.annotations({ description: "Confirmed returns to the payer." }),
  recovered_base_units: BaseUnits.annotations({ description: "The recovery ledger's entries." }),
  pending_base_units: BaseUnits.annotations({ description: "Transfers signed, not yet final." }),
  held_base_units: BaseUnits.annotations({ description: "credited − settled − returned − pending." }),
  chain_balance_base_units: Schema.NullOr(BaseUnits).annotations({
    description:
      "The deposit address's balance at the finalized block; null before an address or without a chain."
  }),
  held_back: Schema.Array(
    Schema.Struct({
      kind: Schema.Literal("settlement", "return"),
      code: Schema.String.annotations({
        description:
          "Why: `payout_address_blocked`, `payer_wallet_blocked`, `deposit_address_blocked` or `transfer_reverted`."
      }),
      amount_base_units: BaseUnits
    })
  ).annotations({
    description:
      "Transfers held back instead of sent (the token blacklisted a party, or the transfer kept failing its simulation): still owed and still on the deposit address, so counted in `held_base_units`, not as a difference."
  }),
  differences: Schema.Array(
    Schema.Struct({
      rule: Schema.Literal("settlement", "recoveries", "chain_balance"),
      difference_base_units: Schema.String
    })
  ).annotations({ description: "Each rule that does not hold; empty when the request's books balance." })
}).annotations({ identifier: "ReconciledRequest" })

export const ReconciliationReport = Schema.Struct({
  totals: Schema.Struct({
    credited_base_units: BaseUnits,
    settled_base_units: BaseUnits,
    returned_base_units: BaseUnits,
    recovered_base_units: BaseUnits,
    pending_base_units: BaseUnits,
    held_base_units: BaseUnits.annotations({ description: "credited − settled − returned − pending." }),
    requests_with_differences: Schema.Number.annotations({
      description:
        "Requests of the range that break a rule: every one whose books break `settlement` or `recoveries`, and those found among the requests holding money whose chain balance differs (all of them when `differences_complete`)."
    })
  }).annotations({ description: "The whole range's sums, the same on every page." }),
  differences: Schema.Array(ReconciledRequest).annotations({
    description:
      "The requests of the range that do not reconcile, oldest first, on every page: found from the books kept beside the ledger and, for requests with money on their deposit address, the chain."
  }),
  differences_complete: Schema.Boolean.annotations({
    description:
      "False when more than 100 requests break a rule, or more than 100 hold money to compare with the chain: `differences` then shows the first of them, and walking the pages checks every request."
  }),
  requests: Schema.Array(ReconciledRequest).annotations({
    description: "One page of every request in the range, oldest first, each compared with the chain."
  }),
  next_cursor: Schema.NullOr(Schema.String).annotations({
    description: "Pass as `starting_after` to read the next page of `requests`; null on the last page."
  })
}).annotations({ identifier: "ReconciliationReport" })

export class ReconciliationApi extends HttpApiGroup.make("reconciliation")
  .add(
    HttpApiEndpoint.get("report", "/reconciliation")
      .setUrlParams(
        Schema.Struct({
          created_from: Schema.optional(Timestamp).annotations({
            description: "Requests created at or after this time."
          }),
          created_to: Schema.optional(Timestamp).annotations({
            description: "Requests created before this time."
          }),
          limit: Limit,
          starting_after: Schema.optional(Id("dr")).annotations({
            description:
              "The `next_cursor` of the page before (a request of this account; another id is 404)."
          })
        })
      )
      .addSuccess(ReconciliationReport)
      .annotate(
        OpenApi.Summary,
        "Reconcile the account's requests: payments, settlements, returns, recoveries and chain balances"
      )
      .annotate(
        OpenApi.Description,
        "Totals and the requests that do not reconcile come first, on every page, from books kept beside the ledger (their cost does not grow with the account's history); the requests themselves follow by page, oldest first (`limit`, `starting_after`)."
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .addError(NotFound)
  .addError(ServiceUnavailable)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Books per request, to the base unit; every rule holds (no differences) once flows have finished."
  ) {}
