import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * The overview's figures by quarter hour (infra/decisions/0101-account-activity-by-quarter-hour.md): statement-level
 * triggers append what each insert of requests and lifecycle events adds; the summary folds the entries per account
 * and sums at most 30 days of quarter hours, whatever the account's volume. Expand only: the previous release keeps
 * reading the events and requests themselves.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const sums = `
    created_count bigint not null default 0,
    settled_count bigint not null default 0,
    settled_base_units numeric(78,0) not null default 0,
    returned_base_units numeric(78,0) not null default 0`
  yield* sql.unsafe(
    `create table account_activity_entries (account_id uuid not null, quarter timestamptz not null, ${sums})`
  )
  yield* sql`create index account_activity_entries_account on account_activity_entries (account_id)`
  yield* sql.unsafe(`
    create table account_activity (
      account_id uuid not null,
      quarter timestamptz not null,
      ${sums},
      primary key (account_id, quarter)
    )`)
  yield* applyFunctionFiles(["record_account_activity", "fold_account_activity"])
  // The triggers lock each table against writes until this migration commits, so the backfill below and the
  // entries appended afterwards count every row exactly once.
  for (const [table, op, transition] of [
    ["deposit_requests", "insert", "new table as new_rows"],
    ["deposit_requests", "delete", "old table as old_rows"],
    ["lifecycle_events", "insert", "new table as new_rows"],
    ["lifecycle_events", "delete", "old table as old_rows"],
    ["lifecycle_events", "update", "old table as old_rows new table as new_rows"]
  ])
    yield* sql.unsafe(`
      create trigger ${table}_account_activity_${op} after ${op} on ${table}
      referencing ${transition} for each statement execute function record_account_activity()`)
  yield* sql`
    insert into account_activity (account_id, quarter, created_count, settled_count, settled_base_units,
      returned_base_units)
    select account_id, quarter, sum(created_count), sum(settled_count), sum(settled_base_units),
      sum(returned_base_units)
    from (
      select account_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00') as quarter,
        1 as created_count, 0 as settled_count, 0::numeric as settled_base_units, 0::numeric as returned_base_units
      from deposit_requests
      union all
      select e.account_id, date_bin('15 minutes', e.occurred_at, timestamptz '2000-01-01 00:00:00+00'), 0,
        (e.type = 'deposit_request.settled')::int,
        case when e.type = 'deposit_request.settled' then coalesce(d.amount_base_units, 0) else 0 end,
        case when e.type = 'deposit_request.recovered_funds'
          then coalesce((e.body::jsonb #>> '{data,recovery,amount_base_units}')::numeric, 0) else 0 end
      from lifecycle_events e left join deposit_requests d on d.id = e.deposit_request_id
      where e.type in ('deposit_request.settled', 'deposit_request.recovered_funds')
    ) rows
    group by account_id, quarter`
})
