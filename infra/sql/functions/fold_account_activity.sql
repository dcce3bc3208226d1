-- Folds an account's activity entries into its quarter-hour sums, in one statement under a lock per account, so
-- two summaries never fold the same entries. Its cost follows the writes since the last fold, never the history.
create or replace function fold_account_activity(p_account uuid) returns void
language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('account_activity_fold:' || p_account::text, 0));
  with moved as (
    delete from account_activity_entries where account_id = p_account returning *
  )
  insert into account_activity as a (account_id, quarter, created_count, settled_count, settled_base_units,
    returned_base_units)
  select p_account, quarter, sum(created_count), sum(settled_count), sum(settled_base_units),
    sum(returned_base_units)
  from moved group by quarter order by quarter
  on conflict (account_id, quarter) do update set
    created_count = a.created_count + excluded.created_count,
    settled_count = a.settled_count + excluded.settled_count,
    settled_base_units = a.settled_base_units + excluded.settled_base_units,
    returned_base_units = a.returned_base_units + excluded.returned_base_units;
end
$$;
