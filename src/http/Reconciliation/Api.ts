import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Security"
import { InvalidRequest, RateLimited, ServiceUnavailable, Unauthenticated } from "../Errors"
import { Timestamp } from "../../../services/domain/Timestamp"

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
  requests: Schema.Array(ReconciledRequest),
  totals: Schema.Struct({
    credited_base_units: BaseUnits,
    settled_base_units: BaseUnits,
    returned_base_units: BaseUnits,
    held_base_units: BaseUnits,
    requests_with_differences: Schema.Number
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
          })
        })
      )
      .addSuccess(ReconciliationReport)
      .annotate(
        OpenApi.Summary,
        "Reconcile the account's requests: payments, settlements, returns, recoveries and chain balances"
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .addError(ServiceUnavailable)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Books per request, to the base unit; every rule holds (no differences) once flows have finished."
  ) {}
