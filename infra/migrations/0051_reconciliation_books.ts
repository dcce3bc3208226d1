import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * Books kept beside the ledger for the reconciliation report (infra/decisions/0094-reconciliation-report-and-csv-export.md):
 * ledger writes append entries through triggers in their own transaction; a report folds them into one row of books
 * per request and hourly totals per account, so totals and differences come without reading every request.
 * Expand only: the previous release keeps reading the ledger itself and never sees these tables.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const amounts = `
    credited_base_units numeric(78,0) not null default 0,
    settled_base_units numeric(78,0) not null default 0,
    returned_base_units numeric(78,0) not null default 0,
    recovered_base_units numeric(78,0) not null default 0,
    pending_base_units numeric(78,0) not null default 0`
  yield* sql.unsafe(`
    create table reconciliation_entries (
      account_id uuid not null,
      deposit_request_id uuid not null,
      created_at timestamptz not null,
      amount_base_units numeric(78,0) not null,
      ${amounts},
      settled_flag integer not null default 0
    )`)
  yield* sql`create index reconciliation_entries_account on reconciliation_entries (account_id)`
  yield* sql.unsafe(`
    create table reconciliation_books (
      deposit_request_id uuid primary key,
      account_id uuid not null,
      created_at timestamptz not null,
      amount_base_units numeric(78,0) not null,
      ${amounts},
      settled_flag integer not null default 0,
      ledger_differs boolean generated always as (
        ((settled_flag > 0 or settled_base_units > 0) and settled_base_units <> amount_base_units)
        or recovered_base_units <> returned_base_units) stored,
      in_custody boolean generated always as (
        pending_base_units <> 0
        or credited_base_units - settled_base_units - returned_base_units - pending_base_units <> 0) stored
    )`)
  yield* sql`
    create index reconciliation_books_account_created
    on reconciliation_books (account_id, created_at, deposit_request_id)`
  // The two sets a report reads first: books that break a rule, and books with money on the deposit address.
  yield* sql`
    create index reconciliation_books_differing
    on reconciliation_books (account_id, created_at, deposit_request_id) where ledger_differs`
  yield* sql`
    create index reconciliation_books_in_custody
    on reconciliation_books (account_id, created_at, deposit_request_id) where in_custody and not ledger_differs`
  yield* sql.unsafe(`
    create table reconciliation_totals (
      account_id uuid not null,
      hour timestamptz not null,
      ${amounts},
      requests_with_differences bigint not null default 0,
      primary key (account_id, hour)
    )`)
  yield* applyFunctionFiles(["record_reconciliation_entries", "fold_reconciliation_entries"])
  // Creating the triggers locks each table against writes until this migration commits, so the backfill below
  // and the entries the triggers append afterwards count every ledger row exactly once.
  yield* sql`
    create trigger chain_credits_reconciliation after insert on chain_credits
    referencing new table as new_rows for each statement execute function record_reconciliation_entries()`
  yield* sql`
    create trigger transfers_reconciliation_insert after insert on transfers
    referencing new table as new_rows for each statement execute function record_reconciliation_entries()`
  yield* sql`
    create trigger transfers_reconciliation_update after update on transfers
    referencing old table as old_rows new table as new_rows
    for each statement execute function record_reconciliation_entries()`
  yield* sql`
    create trigger transfers_reconciliation_delete after delete on transfers
    referencing old table as old_rows for each statement execute function record_reconciliation_entries()`
  yield* sql`
    create trigger deposit_requests_reconciliation after update on deposit_requests for each row
    when ((old.status = 'settled') is distinct from (new.status = 'settled')
      or (old.snapshot #> '{context,recoveries}') is distinct from (new.snapshot #> '{context,recoveries}'))
    execute function record_reconciliation_entries()`
  yield* sql`
    insert into reconciliation_entries (account_id, deposit_request_id, created_at, amount_base_units,
      credited_base_units, settled_base_units, returned_base_units, recovered_base_units, pending_base_units,
      settled_flag)
    select d.account_id, d.id, d.created_at, d.amount_base_units,
      coalesce(c.credited, 0), coalesce(t.settled, 0), coalesce(t.returned, 0),
      (select coalesce(sum((r ->> 'amount_base_units')::numeric), 0)
         from jsonb_array_elements(case when jsonb_typeof(d.snapshot #> '{context,recoveries}') = 'array'
                                        then d.snapshot #> '{context,recoveries}' else '[]' end) r),
      coalesce(t.pending, 0), (d.status = 'settled')::int
    from deposit_requests d
    left join (select deposit_request_id, sum(amount_base_units) as credited from chain_credits group by 1) c
      on c.deposit_request_id = d.id
    left join (select deposit_request_id,
        sum(case when kind = 'settle' and state = 'confirmed' then amount_base_units else 0 end) as settled,
        sum(case when kind = 'return' and state = 'confirmed' then amount_base_units else 0 end) as returned,
        sum(case when state = 'signed' then amount_base_units else 0 end) as pending
      from transfers group by 1) t on t.deposit_request_id = d.id
    where c.deposit_request_id is not null or t.deposit_request_id is not null or d.status = 'settled'
      or jsonb_typeof(d.snapshot #> '{context,recoveries}') = 'array'`
})
