-- What each write adds to an account's activity by quarter hour (infra/decisions/0101-account-activity-by-quarter-hour.md):
-- requests created, and settlements and returns as their lifecycle events record them, appended in the writer's
-- transaction (a row removed or an event moved in time counts back). Only inserts, so writers never wait on a shared
-- row; the summary folds the entries into `account_activity`. Quarter hours, because every time zone's midnight
-- falls on one.
create or replace function record_account_activity() returns trigger
language plpgsql as $$
begin
  -- A transition table exists only for the operations its trigger names: each is read in a branch of its own.
  if tg_table_name = 'deposit_requests' and tg_op = 'INSERT' then
    insert into account_activity_entries (account_id, quarter, created_count)
    select account_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
    from new_rows group by 1, 2;
  elsif tg_table_name = 'deposit_requests' and tg_op = 'DELETE' then
    insert into account_activity_entries (account_id, quarter, created_count)
    select account_id, date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'), -count(*)
    from old_rows group by 1, 2;
  elsif tg_table_name = 'lifecycle_events' then
    -- An update counts the old rows back and the new ones again. Static statements, planned once a session:
    -- every event insert runs this. A statement naming a transition table is planned only when it runs.
    if tg_op in ('UPDATE', 'DELETE') then
      insert into account_activity_entries (account_id, quarter, settled_count, settled_base_units,
                                            returned_base_units)
      select e.account_id, date_bin('15 minutes', e.occurred_at, timestamptz '2000-01-01 00:00:00+00'),
        -count(*) filter (where e.type = 'deposit_request.settled'),
        -coalesce(sum(d.amount_base_units) filter (where e.type = 'deposit_request.settled'), 0),
        -coalesce(sum((e.body::jsonb #>> '{data,recovery,amount_base_units}')::numeric)
          filter (where e.type = 'deposit_request.recovered_funds'), 0)
      from old_rows e left join deposit_requests d on d.id = e.deposit_request_id
      where e.type in ('deposit_request.settled', 'deposit_request.recovered_funds')
      group by 1, 2;
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
      insert into account_activity_entries (account_id, quarter, settled_count, settled_base_units,
                                            returned_base_units)
      select e.account_id, date_bin('15 minutes', e.occurred_at, timestamptz '2000-01-01 00:00:00+00'),
        count(*) filter (where e.type = 'deposit_request.settled'),
        -- A settlement sends exactly the requested amount.
        coalesce(sum(d.amount_base_units) filter (where e.type = 'deposit_request.settled'), 0),
        coalesce(sum((e.body::jsonb #>> '{data,recovery,amount_base_units}')::numeric)
          filter (where e.type = 'deposit_request.recovered_funds'), 0)
      from new_rows e left join deposit_requests d on d.id = e.deposit_request_id
      where e.type in ('deposit_request.settled', 'deposit_request.recovered_funds')
      group by 1, 2;
    end if;
  end if;
  return null;
end
$$;
