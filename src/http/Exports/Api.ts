import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { REQUEST_COLUMNS } from "../../../services/depositRequests/RequestCsv"
import { DepositRequestListParams } from "../DepositRequests/Api"
import { InvalidRequest, RateLimited, ServiceUnavailable, Unauthenticated } from "../Errors"
import { Authentication } from "../Security"

/** The list's filters, without its paging and live-list parameters: an export reads every page. */
export const DepositRequestExportParams = DepositRequestListParams.omit(
  "limit",
  "starting_after",
  "wait_for",
  "version",
  "timeout"
)

export class ExportsApi extends HttpApiGroup.make("exports")
  .add(
    HttpApiEndpoint.get("depositRequestsCsv", "/deposit-requests/export.csv")
      .setUrlParams(DepositRequestExportParams)
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/csv" }).annotations({
          // The header line, so a validator can tell an export from any other text.
          jsonSchema: { pattern: `^${REQUEST_COLUMNS.join(",")}\r\n` },
          description:
            "RFC 4180 CSV in UTF-8, lines ended CRLF, a header line first: `id`, `created_at`, `status`, `amount`, `amount_base_units`, `received`, `received_base_units`, `settled_base_units`, `heading`, `reference`, `customer_id`, `issuer_id`, `payout_address_id`, `payer_wallet`, `deposit_address`, `expires_at`, `transaction_hashes` (space-separated), `metadata` (JSON). A text field that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or CR) is prefixed with `'`."
        })
      )
      .annotate(OpenApi.Summary, "Export deposit requests as CSV, newest first")
      .annotate(
        OpenApi.Description,
        "Every request the list's filters select, streamed as it is read (chunked transfer, constant memory on the server): any range, one request. Authenticated like every merchant route, by the `Authorization` header; save the body as it arrives. A failure after the first bytes ends the body early, without the last line's CRLF."
      )
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .addError(ServiceUnavailable)
  .middleware(Authentication) {}
