-- Folds an account's reconciliation entries into each request's books and the account's hourly totals (by the hour
-- each request was created), in one statement under a lock per account, so two reports never fold the same entries.
-- Its cost follows the ledger writes since the last fold, never the account's history.
create or replace function fold_reconciliation_entries(p_account uuid) returns void
language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('reconciliation_fold:' || p_account::text, 0));
  with moved as (
    delete from reconciliation_entries where account_id = p_account returning *
  ), per_request as (
    select deposit_request_id, min(created_at) as created_at, min(amount_base_units) as amount_base_units,
      sum(credited_base_units) as credited, sum(settled_base_units) as settled,
      sum(returned_base_units) as returned, sum(recovered_base_units) as recovered,
      sum(pending_base_units) as pending, sum(settled_flag)::int as settled_flag
    from moved group by deposit_request_id
  ), before as (
    select b.created_at, b.ledger_differs from reconciliation_books b
    where b.deposit_request_id in (select deposit_request_id from per_request)
  ), after as (
    insert into reconciliation_books as b (deposit_request_id, account_id, created_at, amount_base_units,
      credited_base_units, settled_base_units, returned_base_units, recovered_base_units, pending_base_units,
      settled_flag)
    select deposit_request_id, p_account, created_at, amount_base_units, credited, settled, returned, recovered,
      pending, settled_flag
    from per_request order by deposit_request_id
    on conflict (deposit_request_id) do update set
      credited_base_units = b.credited_base_units + excluded.credited_base_units,
      settled_base_units = b.settled_base_units + excluded.settled_base_units,
      returned_base_units = b.returned_base_units + excluded.returned_base_units,
      recovered_base_units = b.recovered_base_units + excluded.recovered_base_units,
      pending_base_units = b.pending_base_units + excluded.pending_base_units,
      settled_flag = b.settled_flag + excluded.settled_flag
    returning b.created_at, b.ledger_differs
  ), deltas as (
    -- Summed by hour apart, never joined row to row: a fold of many entries stays one pass over each.
    select created_at, credited, settled, returned, recovered, pending, 0 as differing from per_request
    union all
    select created_at, 0, 0, 0, 0, 0, ledger_differs::int from after
    union all
    select created_at, 0, 0, 0, 0, 0, -ledger_differs::int from before
  )
  , hourly as (
    insert into reconciliation_totals as t (account_id, hour, credited_base_units, settled_base_units,
      returned_base_units, recovered_base_units, pending_base_units, requests_with_differences)
    select p_account, date_trunc('hour', created_at, 'UTC'), sum(credited), sum(settled), sum(returned),
      sum(recovered), sum(pending), sum(differing)
    from deltas group by 2 order by 2
    on conflict (account_id, hour) do update set
      credited_base_units = t.credited_base_units + excluded.credited_base_units,
      settled_base_units = t.settled_base_units + excluded.settled_base_units,
      returned_base_units = t.returned_base_units + excluded.returned_base_units,
      recovered_base_units = t.recovered_base_units + excluded.recovered_base_units,
      pending_base_units = t.pending_base_units + excluded.pending_base_units,
      requests_with_differences = t.requests_with_differences + excluded.requests_with_differences
  )
  -- The whole history's row, so a report of the whole account reads one row, not every hour it has existed (a
  -- data-modifying CTE runs to completion whether or not it is read).
  insert into reconciliation_account_totals as t (account_id, credited_base_units, settled_base_units,
    returned_base_units, recovered_base_units, pending_base_units, requests_with_differences)
  select p_account, coalesce(sum(credited), 0), coalesce(sum(settled), 0), coalesce(sum(returned), 0),
    coalesce(sum(recovered), 0), coalesce(sum(pending), 0), coalesce(sum(differing), 0)
  from deltas
  on conflict (account_id) do update set
    credited_base_units = t.credited_base_units + excluded.credited_base_units,
    settled_base_units = t.settled_base_units + excluded.settled_base_units,
    returned_base_units = t.returned_base_units + excluded.returned_base_units,
    recovered_base_units = t.recovered_base_units + excluded.recovered_base_units,
    pending_base_units = t.pending_base_units + excluded.pending_base_units,
    requests_with_differences = t.requests_with_differences + excluded.requests_with_differences;
end
$$;
