import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * Each account's reconciliation totals over its whole history in one row
 * (infra/decisions/0094-reconciliation-report-and-csv-export.md), kept by the fold beside the hourly sums: a report
 * of the whole account reads that row instead of summing every hour the account has existed. Expand only.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table reconciliation_account_totals (
      account_id uuid primary key,
      credited_base_units numeric(78,0) not null default 0,
      settled_base_units numeric(78,0) not null default 0,
      returned_base_units numeric(78,0) not null default 0,
      recovered_base_units numeric(78,0) not null default 0,
      pending_base_units numeric(78,0) not null default 0,
      requests_with_differences bigint not null default 0
    )`
  // The fold that keeps the row takes the account's lock; the hourly sums folded so far are the row's start.
  yield* sql`lock table reconciliation_totals in share mode`
  yield* applyFunctionFiles(["fold_reconciliation_entries"])
  yield* sql`
    insert into reconciliation_account_totals (account_id, credited_base_units, settled_base_units,
      returned_base_units, recovered_base_units, pending_base_units, requests_with_differences)
    select account_id, sum(credited_base_units), sum(settled_base_units), sum(returned_base_units),
      sum(recovered_base_units), sum(pending_base_units), sum(requests_with_differences)
    from reconciliation_totals group by account_id`
})
