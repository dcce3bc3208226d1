-- What each ledger write changes in a request's books (infra/decisions/0094-reconciliation-report-and-csv-export.md),
-- appended in the transaction of the write: credits, settlements and returns (confirmed or still signed), the recovery
-- ledger in the request's snapshot, and whether the request is settled. Only inserts, so a ledger write never waits
-- on another request's books; the report folds the entries into `reconciliation_books` and `reconciliation_totals`.
create or replace function record_reconciliation_entries() returns trigger
language plpgsql as $$
declare
  changed jsonb := '[]';
begin
  if tg_table_name = 'deposit_requests' then
    insert into reconciliation_entries (account_id, deposit_request_id, created_at, amount_base_units,
                                        recovered_base_units, settled_flag)
    values (new.account_id, new.id, new.created_at, new.amount_base_units,
            (select coalesce(sum((r ->> 'amount_base_units')::numeric), 0)
               from jsonb_array_elements(case when jsonb_typeof(new.snapshot #> '{context,recoveries}') = 'array'
                                              then new.snapshot #> '{context,recoveries}' else '[]' end) r)
            - (select coalesce(sum((r ->> 'amount_base_units')::numeric), 0)
               from jsonb_array_elements(case when jsonb_typeof(old.snapshot #> '{context,recoveries}') = 'array'
                                              then old.snapshot #> '{context,recoveries}' else '[]' end) r),
            (new.status = 'settled')::int - (old.status = 'settled')::int);
  elsif tg_table_name = 'chain_credits' then
    insert into reconciliation_entries (account_id, deposit_request_id, created_at, amount_base_units,
                                        credited_base_units)
    select d.account_id, d.id, d.created_at, d.amount_base_units, sum(n.amount_base_units)
    from new_rows n join deposit_requests d on d.id = n.deposit_request_id
    group by d.id;
  elsif tg_table_name = 'transfers' then
    -- A transition table exists only for the operations its trigger names, and a statement naming a missing one
    -- fails: each is read in a statement of its own, and the sums in one.
    if tg_op in ('INSERT', 'UPDATE') then
      changed := changed || (select coalesce(jsonb_agg(jsonb_build_object('id', n.deposit_request_id, 'kind', n.kind,
        'state', n.state, 'amount', n.amount_base_units, 'sign', 1)), '[]') from new_rows n);
    end if;
    if tg_op in ('UPDATE', 'DELETE') then
      changed := changed || (select coalesce(jsonb_agg(jsonb_build_object('id', o.deposit_request_id, 'kind', o.kind,
        'state', o.state, 'amount', o.amount_base_units, 'sign', -1)), '[]') from old_rows o);
    end if;
    with per_request as (
      select c.id,
        sum(c.sign * case when c.kind = 'settle' and c.state = 'confirmed' then c.amount else 0 end) as settled,
        sum(c.sign * case when c.kind = 'return' and c.state = 'confirmed' then c.amount else 0 end) as returned,
        sum(c.sign * case when c.state = 'signed' then c.amount else 0 end) as pending
      from jsonb_to_recordset(changed) as c(id uuid, kind text, state text, amount numeric, sign int)
      group by c.id
    )
    insert into reconciliation_entries (account_id, deposit_request_id, created_at, amount_base_units,
                                        settled_base_units, returned_base_units, pending_base_units)
    select d.account_id, d.id, d.created_at, d.amount_base_units, p.settled, p.returned, p.pending
    from per_request p join deposit_requests d on d.id = p.id
    where p.settled <> 0 or p.returned <> 0 or p.pending <> 0;
  end if;
  return null;
end
$$;
