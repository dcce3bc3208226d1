import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One request's payments in and transfers out by the request (infra/decisions/0094-reconciliation-report-and-csv-export.md):
 * the CSV export reads them for each chunk of requests, and a request's transfers route for one; without these
 * indexes each read scanned every credit and transfer ever recorded.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create index if not exists chain_credits_request on chain_credits (deposit_request_id)`
  yield* sql`create index if not exists transfers_request on transfers (deposit_request_id)`
})
