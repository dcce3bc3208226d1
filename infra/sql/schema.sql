-- An empty database after every migration in infra/migrations: pg_dump 15 --schema-only
-- --no-owner --no-privileges, normalised by infra/tooling/schema.ts. Not edited by hand: written by
-- `npm run schema:write`, and `npm run schema:check` (CI) fails when the migrations make anything else.

--
-- PostgreSQL database dump
--

--
-- Name: apply_actor_steps_v2(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.apply_actor_steps_v2(p_steps jsonb) RETURNS TABLE(kind text, deposit_request_id uuid, event_id text)
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  v_at timestamptz := (p_steps->>'at')::timestamptz;
  v_ids uuid[] := array(select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid));
begin
  -- Lock the rows in id order (one writer per request; two calls cannot deadlock), compare versions, and find
  -- the events applied already (the caller steps again without them).
  return query
    with locked as materialized (
      select d.id, d.version from deposit_requests d where d.id = any(v_ids) order by d.id for update
    )
    select case when l.id is null then 'missing' else 'stale' end, r.id, null::text
    from jsonb_to_recordset(p_steps->'requests') as r(id uuid, expected_version bigint)
    left join locked l on l.id = r.id
    where l.id is null or l.version <> r.expected_version
    union all
    select 'seen', e.deposit_request_id, e.event_id
    from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text)
    cross join lateral (
      select 1 from applied_events a
      where a.deposit_request_id = e.deposit_request_id and a.event_id = e.event_id
      limit 1
    ) a;
  if found then
    return;
  end if;
  -- What foreign keys would check row by row, once for the call: every event and lifecycle event belongs to a
  -- request of this call (locked above, so it exists; a lifecycle event takes that request's account).
  if exists (
    select 1 from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid)
    where e.deposit_request_id <> all(v_ids)
  ) or exists (
    select 1 from jsonb_to_recordset(p_steps->'lifecycle') as x(deposit_request_id uuid)
    where x.deposit_request_id <> all(v_ids)
  ) then
    raise exception 'apply_actor_steps_v2: an event names a request outside the call'
      using errcode = 'foreign_key_violation';
  end if;
  -- Data-modifying CTEs all run to completion: the snapshots, the dedupe records (a conflict here is a broken
  -- invariant, so it fails the call), the lifecycle events, and the outbox rows: the commands, and an
  -- announcement of each lifecycle event written.
  with stepped as (
    update deposit_requests d set
      status = u.status, version = u.version, snapshot = u.snapshot,
      received_base_units = u.received_base_units, deposit_address = u.deposit_address,
      updated_at = v_at
    from jsonb_to_recordset(p_steps->'requests') as u(
      id uuid, version bigint, status text, snapshot jsonb, received_base_units numeric,
      deposit_address text)
    where d.id = any(v_ids) and d.id = u.id
    returning d.id, d.account_id
  ), applied as (
    insert into applied_events (deposit_request_id, event_id, applied_at)
    select e.deposit_request_id, e.event_id, v_at
    from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text)
  ), lifecycle as materialized (
    select * from jsonb_to_recordset(p_steps->'lifecycle') as x(
      n integer, id uuid, deposit_request_id uuid, type text, dedupe text, body text, trace_parent text)
  ), written as (
    insert into lifecycle_events as l (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
    select x.id, s.account_id, x.deposit_request_id, x.type, coalesce(x.dedupe, x.type), x.body, v_at
    from lifecycle x join stepped s on s.id = x.deposit_request_id
    on conflict (deposit_request_id, dedupe) do nothing
    returning l.id
  )
  insert into outbox (topic, deposit_request_id, payload, created_at, trace_parent)
  select o.topic, o.deposit_request_id, o.payload, v_at, o.trace_parent
  from (
    select x.n, 'lifecycle' as topic, x.deposit_request_id, jsonb_build_object('event_id', x.id) as payload,
      x.trace_parent
    from lifecycle x where x.id in (select w.id from written w)
    union all
    select c.n, c.topic, c.deposit_request_id, c.payload, c.trace_parent
    from jsonb_to_recordset(p_steps->'commands') as c(
      n integer, topic text, deposit_request_id uuid, payload jsonb, trace_parent text)
  ) o
  order by o.n;
end $$;

--
-- Name: apply_actor_steps_v3(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.apply_actor_steps_v3(p_steps jsonb) RETURNS TABLE(kind text, deposit_request_id uuid, event_id text)
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  v_at timestamptz := (p_steps->>'at')::timestamptz;
  v_ids uuid[] := array(select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid));
begin
  -- Lock the rows in id order (one writer per request; two calls cannot deadlock), compare versions, and find
  -- the events applied already (the caller steps again without them).
  return query
    with locked as materialized (
      select d.id, d.version from deposit_requests d where d.id = any(v_ids) order by d.id for update
    )
    select case when l.id is null then 'missing' else 'stale' end, r.id, null::text
    from jsonb_to_recordset(p_steps->'requests') as r(id uuid, expected_version bigint)
    left join locked l on l.id = r.id
    where l.id is null or l.version <> r.expected_version
    union all
    select 'seen', e.deposit_request_id, e.event_id
    from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text)
    cross join lateral (
      select 1 from applied_events a
      where a.deposit_request_id = e.deposit_request_id and a.event_id = e.event_id
      limit 1
    ) a;
  if found then
    return;
  end if;
  -- What foreign keys would check row by row, once for the call: every event and lifecycle event belongs to a
  -- request of this call (locked above, so it exists; a lifecycle event takes that request's account).
  if exists (
    select 1 from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid)
    where e.deposit_request_id <> all(v_ids)
  ) or exists (
    select 1 from jsonb_to_recordset(p_steps->'lifecycle') as x(deposit_request_id uuid)
    where x.deposit_request_id <> all(v_ids)
  ) then
    raise exception 'apply_actor_steps_v3: an event names a request outside the call'
      using errcode = 'foreign_key_violation';
  end if;
  -- Data-modifying CTEs all run to completion: the snapshots, the dedupe records (a conflict here is a broken
  -- invariant, so it fails the call), the lifecycle events, and the outbox rows: the commands, and an
  -- announcement of each lifecycle event written.
  with stepped as (
    update deposit_requests d set
      status = u.status, version = u.version, snapshot = u.snapshot,
      received_base_units = u.received_base_units, deposit_address = u.deposit_address,
      updated_at = v_at
    from jsonb_to_recordset(p_steps->'requests') as u(
      id uuid, version bigint, status text, snapshot jsonb, received_base_units numeric,
      deposit_address text)
    where d.id = any(v_ids) and d.id = u.id
    returning d.id, d.account_id, d.status, d.snapshot
  ), events as materialized (
    select * from jsonb_to_recordset(p_steps->'events') as e(
      deposit_request_id uuid, event_id text, version bigint, event jsonb, snapshot jsonb, status text)
  ), applied as (
    insert into applied_events (deposit_request_id, event_id, applied_at)
    select e.deposit_request_id, e.event_id, v_at from events e
  ), history as (
    insert into deposit_request_steps (
      deposit_request_id, version, account_id, event_id, event, at, instance, status, snapshot)
    select e.deposit_request_id, e.version, s.account_id, e.event_id, e.event, v_at, p_steps->>'instance',
      coalesce(e.status, s.status), coalesce(e.snapshot, s.snapshot)
    from events e join stepped s on s.id = e.deposit_request_id
    where e.version is not null
  ), lifecycle as materialized (
    select * from jsonb_to_recordset(p_steps->'lifecycle') as x(
      n integer, id uuid, deposit_request_id uuid, type text, dedupe text, body text, trace_parent text)
  ), written as (
    insert into lifecycle_events as l (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
    select x.id, s.account_id, x.deposit_request_id, x.type, coalesce(x.dedupe, x.type), x.body, v_at
    from lifecycle x join stepped s on s.id = x.deposit_request_id
    on conflict (deposit_request_id, dedupe) do nothing
    returning l.id
  )
  insert into outbox (topic, deposit_request_id, payload, created_at, trace_parent)
  select o.topic, o.deposit_request_id, o.payload, v_at, o.trace_parent
  from (
    select x.n, 'lifecycle' as topic, x.deposit_request_id, jsonb_build_object('event_id', x.id) as payload,
      x.trace_parent
    from lifecycle x where x.id in (select w.id from written w)
    union all
    select c.n, c.topic, c.deposit_request_id, c.payload, c.trace_parent
    from jsonb_to_recordset(p_steps->'commands') as c(
      n integer, topic text, deposit_request_id uuid, payload jsonb, trace_parent text)
  ) o
  order by o.n;
end $$;

--
-- Name: create_deposit_requests(jsonb, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.create_deposit_requests(p_rows jsonb, p_window_ms bigint) RETURNS TABLE(id uuid)
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    AS $$
#variable_conflict use_column
begin
  return query
  with input as (
    select * from jsonb_to_recordset(p_rows) as x(
      id uuid, account_id uuid, key text, fingerprint text, status text,
      machine_version integer, snapshot jsonb, amount_base_units numeric, received_base_units numeric,
      heading text, reference text, metadata jsonb, customer_id uuid, issuer_id uuid, payout_address_id uuid,
      payer_policy_mode text, expected_email text, payer_reference text, expires_at timestamptz,
      created_at timestamptz, secret_digest text, return_url text)
  ),
  claimed as (
    insert into idempotency_keys as k (account_id, key, fingerprint, resource_id, created_at)
    select i.account_id, i.key, decode(i.fingerprint, 'hex'), i.id, i.created_at from input i
    cross join lateral (select 1 from issuers s
        where s.id = i.issuer_id and s.account_id = i.account_id and s.deleted_at is null limit 1) s
    cross join lateral (select 1 from payout_addresses p
        where p.id = i.payout_address_id and p.account_id = i.account_id and p.disabled_at is null
          and (p.held_until is null or p.held_until <= i.created_at) limit 1) p
    left join lateral (select true as live from customers c
        where c.id = i.customer_id and c.account_id = i.account_id and c.deleted_at is null limit 1) c on true
    where i.customer_id is null or c.live
    on conflict (account_id, key) do update
      set fingerprint = excluded.fingerprint, resource_id = excluded.resource_id,
        created_at = excluded.created_at
      where k.created_at < excluded.created_at - p_window_ms * interval '1 millisecond'
    returning k.resource_id
  )
  insert into deposit_requests as d (
    id, account_id, status, version, machine_version, snapshot, amount_base_units, received_base_units,
    heading, reference, metadata, customer_id, issuer_id, payout_address_id, payer_policy_mode,
    expected_email, payer_reference, deposit_index, deposit_address, expires_at, created_at, updated_at,
    merchant_session_secret_digest, return_url)
  select i.id, i.account_id, i.status, 1, i.machine_version, i.snapshot, i.amount_base_units,
    i.received_base_units, i.heading, i.reference, i.metadata, i.customer_id, i.issuer_id,
    i.payout_address_id, i.payer_policy_mode, i.expected_email, i.payer_reference, null, null, i.expires_at,
    i.created_at, i.created_at, decode(i.secret_digest, 'hex'), i.return_url
  from input i join claimed c on c.resource_id = i.id
  returning d.id;
end $$;

--
-- Name: fold_account_activity(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fold_account_activity(p_account uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: fold_reconciliation_entries(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.fold_reconciliation_entries(p_account uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: queue_member_notice(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.queue_member_notice() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  if tg_table_name = 'deposit_requests' then
    insert into pending_notices (account_id, kind, cause, subject_id, code, occurred_at)
    values (new.account_id, 'request_paused', 'request_paused:' || new.id || ':' || new.version, new.id,
            new.snapshot #>> '{context,attention,code}', now())
    on conflict (cause) do nothing;
  elsif tg_table_name = 'held_transfers' then
    insert into pending_notices (account_id, kind, cause, subject_id, code, occurred_at)
    select r.account_id, 'return_held', 'return_held:' || new.command_id || ':' || new.held_at, new.deposit_request_id,
           new.code, now()
    from deposit_requests r where r.id = new.deposit_request_id
    on conflict (cause) do nothing;
  elsif tg_table_name = 'webhook_deliveries' then
    insert into pending_notices (account_id, kind, cause, subject_id, code, occurred_at)
    values (new.account_id, 'endpoint_failing', 'series_failed:' || new.job_id, new.endpoint_id, 'series_failed', now())
    on conflict (cause) do nothing;
  end if;
  return null;
end
$$;

--
-- Name: record_account_activity(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.record_account_activity() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: record_reconciliation_entries(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.record_reconciliation_entries() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

--
-- Name: refuse_audit_log_change(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.refuse_audit_log_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  if tg_op = 'DELETE' and current_setting('deposits.audit_log_sweep', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_log is append-only: % refused', tg_op using errcode = '42501';
end
$$;

--
-- Name: take_rate_tokens(uuid, bigint, bigint, bigint, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.take_rate_tokens(p_account uuid, p_now_ms bigint, p_capacity bigint, p_refill_per_ms bigint, p_count integer) RETURNS TABLE(refilled_milli bigint, granted integer)
    LANGUAGE plpgsql
    AS $$
begin
  insert into rate_limit_buckets as b (account_id, milli_tokens, refilled_at_ms)
  values (p_account, p_capacity, p_now_ms) on conflict (account_id) do nothing;
  select least(p_capacity, b.milli_tokens + greatest(0, p_now_ms - b.refilled_at_ms) * p_refill_per_ms)
    into refilled_milli from rate_limit_buckets b where b.account_id = p_account for update;
  granted := least(p_count::bigint, refilled_milli / 1000)::integer;
  update rate_limit_buckets b
    set milli_tokens = refilled_milli - granted * 1000, refilled_at_ms = greatest(b.refilled_at_ms, p_now_ms)
    where b.account_id = p_account;
  return next;
end $$;

--
-- Name: account_activity; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_activity (
    account_id uuid NOT NULL,
    quarter timestamp with time zone NOT NULL,
    created_count bigint DEFAULT 0 NOT NULL,
    settled_count bigint DEFAULT 0 NOT NULL,
    settled_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    returned_base_units numeric(78,0) DEFAULT 0 NOT NULL
);

--
-- Name: account_activity_entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.account_activity_entries (
    account_id uuid NOT NULL,
    quarter timestamp with time zone NOT NULL,
    created_count bigint DEFAULT 0 NOT NULL,
    settled_count bigint DEFAULT 0 NOT NULL,
    settled_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    returned_base_units numeric(78,0) DEFAULT 0 NOT NULL
);

--
-- Name: accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accounts (
    id uuid NOT NULL,
    name text NOT NULL,
    environment text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT accounts_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    digest bytea NOT NULL,
    account_id uuid NOT NULL,
    environment text NOT NULL,
    last4 text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    grace_until timestamp with time zone,
    revoked_at timestamp with time zone,
    CONSTRAINT api_keys_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])))
);

--
-- Name: applied_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.applied_events (
    deposit_request_id uuid NOT NULL,
    event_id text NOT NULL,
    applied_at timestamp with time zone NOT NULL
);

--
-- Name: attachments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.attachments (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    file_name text NOT NULL,
    size_bytes bigint NOT NULL,
    declared_sha256 text,
    sha256 text,
    status text NOT NULL,
    rejection_reason text,
    upload_expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT attachments_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'uploaded'::text, 'rejected'::text, 'expired'::text])))
);

--
-- Name: audit_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_log (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    actor_kind text NOT NULL,
    actor_id text,
    actor_label text NOT NULL,
    action text NOT NULL,
    target_id text,
    at timestamp with time zone NOT NULL,
    client text NOT NULL,
    user_agent text,
    request_id text,
    CONSTRAINT audit_log_actor_kind_check CHECK ((actor_kind = ANY (ARRAY['member'::text, 'api_key'::text, 'operator'::text])))
);

--
-- Name: chain_credits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chain_credits (
    chain_id integer NOT NULL,
    tx_hash text NOT NULL,
    log_index integer NOT NULL,
    block_number bigint NOT NULL,
    block_hash text NOT NULL,
    deposit_request_id uuid NOT NULL,
    from_address text NOT NULL,
    amount_base_units numeric(78,0) NOT NULL,
    seen_at timestamp with time zone NOT NULL,
    applied_at timestamp with time zone,
    reorged_at timestamp with time zone,
    published_at timestamp with time zone,
    reorg_published_at timestamp with time zone,
    reorg_applied_at timestamp with time zone
);

--
-- Name: chain_cursors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chain_cursors (
    chain_id integer NOT NULL,
    last_block bigint NOT NULL
);

--
-- Name: customers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.customers (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    name text NOT NULL,
    email text,
    description text,
    metadata jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);

--
-- Name: dashboard_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.dashboard_sessions (
    digest bytea NOT NULL,
    account_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    member_id uuid,
    user_agent text
);

--
-- Name: deployment; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deployment (
    only_row boolean DEFAULT true NOT NULL,
    stream_namespace text NOT NULL,
    CONSTRAINT deployment_only_row_check CHECK (only_row)
);

--
-- Name: deposit_index_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.deposit_index_seq
    START WITH 0
    INCREMENT BY 1
    MINVALUE 0
    NO MAXVALUE
    CACHE 1;

--
-- Name: deposit_request_attachments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deposit_request_attachments (
    deposit_request_id uuid NOT NULL,
    attachment_id uuid NOT NULL,
    "position" integer NOT NULL
);

--
-- Name: deposit_request_steps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deposit_request_steps (
    deposit_request_id uuid NOT NULL,
    version bigint NOT NULL,
    seq bigint NOT NULL,
    account_id uuid NOT NULL,
    event_id text NOT NULL,
    event jsonb NOT NULL,
    at timestamp with time zone NOT NULL,
    instance text NOT NULL,
    status text NOT NULL,
    snapshot jsonb NOT NULL
);

--
-- Name: deposit_request_steps_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.deposit_request_steps ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.deposit_request_steps_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: deposit_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deposit_requests (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    status text NOT NULL,
    version bigint NOT NULL,
    machine_version integer NOT NULL,
    snapshot jsonb NOT NULL,
    amount_base_units numeric(78,0) NOT NULL,
    received_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    heading text NOT NULL,
    reference text NOT NULL,
    metadata jsonb NOT NULL,
    customer_id uuid,
    issuer_id uuid NOT NULL,
    payout_address_id uuid NOT NULL,
    payer_policy_mode text NOT NULL,
    expected_email text,
    payer_reference text,
    merchant_session_secret_digest bytea,
    deposit_index integer,
    deposit_address text,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    return_url text,
    CONSTRAINT deposit_requests_amount_base_units_check CHECK ((amount_base_units > (0)::numeric))
)
WITH (fillfactor='70');

--
-- Name: effect_sql_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.effect_sql_migrations (
    migration_id integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    name text NOT NULL
);

--
-- Name: held_transfers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.held_transfers (
    command_id text NOT NULL,
    deposit_request_id uuid NOT NULL,
    topic text NOT NULL,
    payload jsonb NOT NULL,
    code text NOT NULL,
    reason text NOT NULL,
    held_at timestamp with time zone NOT NULL,
    trace_parent text
);

--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    account_id uuid NOT NULL,
    key text NOT NULL,
    fingerprint bytea NOT NULL,
    resource_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: issuers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.issuers (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    display_name text NOT NULL,
    legal_name text,
    support_email text,
    support_url text,
    metadata jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);

--
-- Name: leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.leases (
    name text NOT NULL,
    holder text NOT NULL,
    expires_at_ms bigint NOT NULL
);

--
-- Name: lifecycle_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.lifecycle_events (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    deposit_request_id uuid,
    type text NOT NULL,
    dedupe text NOT NULL,
    body text NOT NULL,
    occurred_at timestamp with time zone NOT NULL
);

--
-- Name: mailbox_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_codes (
    id uuid NOT NULL,
    deposit_request_id uuid NOT NULL,
    code_digest bytea NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

--
-- Name: member_invites; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.member_invites (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    email text NOT NULL,
    token_digest bytea NOT NULL,
    invited_by uuid,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    accepted_at timestamp with time zone,
    revoked_at timestamp with time zone
);

--
-- Name: member_notice_preferences; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.member_notice_preferences (
    member_id uuid NOT NULL,
    kind text NOT NULL,
    enabled boolean NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT member_notice_preferences_kind_check CHECK ((kind = ANY (ARRAY['request_paused'::text, 'endpoint_failing'::text, 'return_held'::text])))
);

--
-- Name: members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.members (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    email text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    invited_by uuid,
    removed_at timestamp with time zone
);

--
-- Name: notice_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notice_deliveries (
    notice_id bigint NOT NULL,
    member_id uuid NOT NULL
);

--
-- Name: outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.outbox (
    id bigint NOT NULL,
    topic text NOT NULL,
    deposit_request_id uuid,
    payload jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    published_at timestamp with time zone,
    trace_parent text
);

--
-- Name: outbox_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: outbox_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.outbox_id_seq OWNED BY public.outbox.id;

--
-- Name: passkeys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.passkeys (
    id uuid NOT NULL,
    member_id uuid NOT NULL,
    credential_id text NOT NULL,
    public_key bytea NOT NULL,
    counter bigint NOT NULL,
    transports text[] DEFAULT '{}'::text[] NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    last_used_at timestamp with time zone
);

--
-- Name: payout_addresses; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payout_addresses (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    address text NOT NULL,
    label text,
    metadata jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    disabled_at timestamp with time zone,
    disabled_reason text,
    held_until timestamp with time zone
);

--
-- Name: pending_notices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pending_notices (
    id bigint NOT NULL,
    account_id uuid NOT NULL,
    kind text NOT NULL,
    cause text NOT NULL,
    subject_id uuid NOT NULL,
    code text,
    occurred_at timestamp with time zone NOT NULL,
    sent_at timestamp with time zone,
    CONSTRAINT pending_notices_kind_check CHECK ((kind = ANY (ARRAY['request_paused'::text, 'endpoint_failing'::text, 'return_held'::text])))
);

--
-- Name: pending_notices_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.pending_notices ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.pending_notices_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: rate_limit_buckets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_limit_buckets (
    account_id uuid NOT NULL,
    milli_tokens bigint NOT NULL,
    refilled_at_ms bigint NOT NULL
);

--
-- Name: reconciliation_account_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reconciliation_account_totals (
    account_id uuid NOT NULL,
    credited_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    settled_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    returned_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    recovered_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    pending_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    requests_with_differences bigint DEFAULT 0 NOT NULL
);

--
-- Name: reconciliation_books; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reconciliation_books (
    deposit_request_id uuid NOT NULL,
    account_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    amount_base_units numeric(78,0) NOT NULL,
    credited_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    settled_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    returned_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    recovered_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    pending_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    settled_flag integer DEFAULT 0 NOT NULL,
    ledger_differs boolean GENERATED ALWAYS AS (((((settled_flag > 0) OR (settled_base_units > (0)::numeric)) AND (settled_base_units <> amount_base_units)) OR (recovered_base_units <> returned_base_units))) STORED,
    in_custody boolean GENERATED ALWAYS AS (((pending_base_units <> (0)::numeric) OR ((((credited_base_units - settled_base_units) - returned_base_units) - pending_base_units) <> (0)::numeric))) STORED
);

--
-- Name: reconciliation_entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reconciliation_entries (
    account_id uuid NOT NULL,
    deposit_request_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    amount_base_units numeric(78,0) NOT NULL,
    credited_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    settled_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    returned_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    recovered_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    pending_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    settled_flag integer DEFAULT 0 NOT NULL
);

--
-- Name: reconciliation_totals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reconciliation_totals (
    account_id uuid NOT NULL,
    hour timestamp with time zone NOT NULL,
    credited_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    settled_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    returned_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    recovered_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    pending_base_units numeric(78,0) DEFAULT 0 NOT NULL,
    requests_with_differences bigint DEFAULT 0 NOT NULL
);

--
-- Name: service_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.service_secrets (
    name text NOT NULL,
    value text NOT NULL
);

--
-- Name: sign_in_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_attempts (
    id uuid NOT NULL,
    kind text NOT NULL,
    email text,
    client text NOT NULL,
    member_id uuid,
    at timestamp with time zone NOT NULL,
    outcome text NOT NULL
);

--
-- Name: sign_in_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sign_in_codes (
    id uuid NOT NULL,
    email text NOT NULL,
    code_digest bytea NOT NULL,
    link_digest bytea NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    binding_digest bytea,
    client text,
    user_agent text
);

--
-- Name: stored_objects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stored_objects (
    key text NOT NULL,
    bytes bytea NOT NULL,
    content_type text NOT NULL,
    created_at timestamp with time zone NOT NULL
);

--
-- Name: token_status; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.token_status (
    token text NOT NULL,
    paused boolean NOT NULL,
    changed_at timestamp with time zone NOT NULL,
    checked_at timestamp with time zone NOT NULL
);

--
-- Name: transfers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.transfers (
    command_id text NOT NULL,
    deposit_request_id uuid NOT NULL,
    kind text NOT NULL,
    to_address text NOT NULL,
    amount_base_units numeric(78,0) NOT NULL,
    tx_nonce integer NOT NULL,
    tx_hash text NOT NULL,
    raw_tx text NOT NULL,
    state text NOT NULL,
    block_number bigint,
    created_at timestamp with time zone NOT NULL,
    confirmed_at timestamp with time zone,
    replaced_tx_hashes text[] DEFAULT '{}'::text[] NOT NULL,
    signed_at timestamp with time zone DEFAULT now() NOT NULL,
    trace_parent text,
    CONSTRAINT transfers_kind_check CHECK ((kind = ANY (ARRAY['settle'::text, 'return'::text]))),
    CONSTRAINT transfers_state_check CHECK ((state = ANY (ARRAY['signed'::text, 'confirmed'::text, 'reverted'::text])))
);

--
-- Name: verification_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.verification_attempts (
    id uuid NOT NULL,
    deposit_request_id uuid NOT NULL,
    kind text NOT NULL,
    outcome text NOT NULL,
    reason text,
    proof_digest bytea,
    attempted_at timestamp with time zone NOT NULL,
    wallet text,
    CONSTRAINT verification_attempts_kind_check CHECK ((kind = ANY (ARRAY['merchant_session'::text, 'wallet'::text, 'mailbox_send'::text, 'mailbox_code'::text]))),
    CONSTRAINT verification_attempts_outcome_check CHECK ((outcome = ANY (ARRAY['accepted'::text, 'refused'::text])))
);

--
-- Name: webauthn_challenges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webauthn_challenges (
    id uuid NOT NULL,
    member_id uuid,
    purpose text NOT NULL,
    challenge text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT webauthn_challenges_purpose_check CHECK ((purpose = ANY (ARRAY['register'::text, 'sign_in'::text])))
);

--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    job_id uuid NOT NULL,
    event_id uuid NOT NULL,
    event_type text NOT NULL,
    attempt integer NOT NULL,
    redelivery boolean NOT NULL,
    outcome text NOT NULL,
    response_status integer,
    error_kind text,
    error_message text,
    attempted_at timestamp with time zone NOT NULL,
    duration_ms integer NOT NULL,
    next_attempt_at timestamp with time zone,
    request_headers jsonb,
    response_body text,
    response_body_truncated boolean DEFAULT false NOT NULL,
    CONSTRAINT webhook_deliveries_outcome_check CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'retrying'::text, 'failed'::text, 'cancelled'::text]))),
    CONSTRAINT webhook_deliveries_response_body_bounded CHECK ((char_length(response_body) <= 4096))
);

--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    url text NOT NULL,
    secret text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    disabled_at timestamp with time zone,
    listener boolean DEFAULT false NOT NULL,
    event_types text[],
    last_polled_at timestamp with time zone,
    previous_secret text,
    previous_secret_expires_at timestamp with time zone,
    CONSTRAINT webhook_endpoints_event_types_not_empty CHECK (((event_types IS NULL) OR (cardinality(event_types) > 0))),
    CONSTRAINT webhook_endpoints_previous_secret_expiry CHECK (((previous_secret IS NULL) = (previous_secret_expires_at IS NULL)))
);

--
-- Name: webhook_jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_jobs (
    id uuid NOT NULL,
    account_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id uuid NOT NULL,
    redelivery boolean NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    state text NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    locked_until timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    trace_parent text,
    published_at timestamp with time zone,
    published_seq bigint,
    publications integer DEFAULT 0 NOT NULL,
    CONSTRAINT webhook_jobs_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
);

--
-- Name: outbox id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox ALTER COLUMN id SET DEFAULT nextval('public.outbox_id_seq'::regclass);

--
-- Name: account_activity account_activity_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.account_activity
    ADD CONSTRAINT account_activity_pkey PRIMARY KEY (account_id, quarter);

--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (digest);

--
-- Name: applied_events applied_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.applied_events
    ADD CONSTRAINT applied_events_pkey PRIMARY KEY (deposit_request_id, event_id);

--
-- Name: attachments attachments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attachments
    ADD CONSTRAINT attachments_pkey PRIMARY KEY (id);

--
-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

--
-- Name: chain_credits chain_credits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_credits
    ADD CONSTRAINT chain_credits_pkey PRIMARY KEY (chain_id, tx_hash, log_index);

--
-- Name: chain_cursors chain_cursors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_cursors
    ADD CONSTRAINT chain_cursors_pkey PRIMARY KEY (chain_id);

--
-- Name: customers customers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.customers
    ADD CONSTRAINT customers_pkey PRIMARY KEY (id);

--
-- Name: dashboard_sessions dashboard_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (digest);

--
-- Name: deployment deployment_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deployment
    ADD CONSTRAINT deployment_pkey PRIMARY KEY (only_row);

--
-- Name: deposit_request_attachments deposit_request_attachments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_request_attachments
    ADD CONSTRAINT deposit_request_attachments_pkey PRIMARY KEY (deposit_request_id, attachment_id);

--
-- Name: deposit_request_steps deposit_request_steps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_request_steps
    ADD CONSTRAINT deposit_request_steps_pkey PRIMARY KEY (deposit_request_id, version);

--
-- Name: deposit_requests deposit_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_requests
    ADD CONSTRAINT deposit_requests_pkey PRIMARY KEY (id);

--
-- Name: effect_sql_migrations effect_sql_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.effect_sql_migrations
    ADD CONSTRAINT effect_sql_migrations_pkey PRIMARY KEY (migration_id);

--
-- Name: held_transfers held_transfers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.held_transfers
    ADD CONSTRAINT held_transfers_pkey PRIMARY KEY (command_id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (account_id, key);

--
-- Name: issuers issuers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.issuers
    ADD CONSTRAINT issuers_pkey PRIMARY KEY (id);

--
-- Name: leases leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.leases
    ADD CONSTRAINT leases_pkey PRIMARY KEY (name);

--
-- Name: lifecycle_events lifecycle_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.lifecycle_events
    ADD CONSTRAINT lifecycle_events_pkey PRIMARY KEY (id);

--
-- Name: mailbox_codes mailbox_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_codes
    ADD CONSTRAINT mailbox_codes_pkey PRIMARY KEY (id);

--
-- Name: member_invites member_invites_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.member_invites
    ADD CONSTRAINT member_invites_pkey PRIMARY KEY (id);

--
-- Name: member_invites member_invites_token_digest_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.member_invites
    ADD CONSTRAINT member_invites_token_digest_key UNIQUE (token_digest);

--
-- Name: member_notice_preferences member_notice_preferences_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.member_notice_preferences
    ADD CONSTRAINT member_notice_preferences_pkey PRIMARY KEY (member_id, kind);

--
-- Name: members members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (id);

--
-- Name: notice_deliveries notice_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notice_deliveries
    ADD CONSTRAINT notice_deliveries_pkey PRIMARY KEY (notice_id, member_id);

--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);

--
-- Name: passkeys passkeys_credential_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passkeys
    ADD CONSTRAINT passkeys_credential_id_key UNIQUE (credential_id);

--
-- Name: passkeys passkeys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passkeys
    ADD CONSTRAINT passkeys_pkey PRIMARY KEY (id);

--
-- Name: payout_addresses payout_addresses_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_addresses
    ADD CONSTRAINT payout_addresses_pkey PRIMARY KEY (id);

--
-- Name: pending_notices pending_notices_cause_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pending_notices
    ADD CONSTRAINT pending_notices_cause_key UNIQUE (cause);

--
-- Name: pending_notices pending_notices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pending_notices
    ADD CONSTRAINT pending_notices_pkey PRIMARY KEY (id);

--
-- Name: rate_limit_buckets rate_limit_buckets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_pkey PRIMARY KEY (account_id);

--
-- Name: reconciliation_account_totals reconciliation_account_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reconciliation_account_totals
    ADD CONSTRAINT reconciliation_account_totals_pkey PRIMARY KEY (account_id);

--
-- Name: reconciliation_books reconciliation_books_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reconciliation_books
    ADD CONSTRAINT reconciliation_books_pkey PRIMARY KEY (deposit_request_id);

--
-- Name: reconciliation_totals reconciliation_totals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reconciliation_totals
    ADD CONSTRAINT reconciliation_totals_pkey PRIMARY KEY (account_id, hour);

--
-- Name: service_secrets service_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.service_secrets
    ADD CONSTRAINT service_secrets_pkey PRIMARY KEY (name);

--
-- Name: sign_in_attempts sign_in_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_attempts
    ADD CONSTRAINT sign_in_attempts_pkey PRIMARY KEY (id);

--
-- Name: sign_in_codes sign_in_codes_link_digest_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_codes
    ADD CONSTRAINT sign_in_codes_link_digest_key UNIQUE (link_digest);

--
-- Name: sign_in_codes sign_in_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sign_in_codes
    ADD CONSTRAINT sign_in_codes_pkey PRIMARY KEY (id);

--
-- Name: stored_objects stored_objects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stored_objects
    ADD CONSTRAINT stored_objects_pkey PRIMARY KEY (key);

--
-- Name: token_status token_status_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.token_status
    ADD CONSTRAINT token_status_pkey PRIMARY KEY (token);

--
-- Name: transfers transfers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transfers
    ADD CONSTRAINT transfers_pkey PRIMARY KEY (command_id);

--
-- Name: transfers transfers_tx_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transfers
    ADD CONSTRAINT transfers_tx_hash_key UNIQUE (tx_hash);

--
-- Name: verification_attempts verification_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_attempts
    ADD CONSTRAINT verification_attempts_pkey PRIMARY KEY (id);

--
-- Name: webauthn_challenges webauthn_challenges_challenge_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webauthn_challenges
    ADD CONSTRAINT webauthn_challenges_challenge_key UNIQUE (challenge);

--
-- Name: webauthn_challenges webauthn_challenges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webauthn_challenges
    ADD CONSTRAINT webauthn_challenges_pkey PRIMARY KEY (id);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

--
-- Name: webhook_jobs webhook_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_jobs
    ADD CONSTRAINT webhook_jobs_pkey PRIMARY KEY (id);

--
-- Name: account_activity_entries_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX account_activity_entries_account ON public.account_activity_entries USING btree (account_id);

--
-- Name: api_keys_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_account ON public.api_keys USING btree (account_id);

--
-- Name: api_keys_one_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX api_keys_one_active ON public.api_keys USING btree (account_id) WHERE ((grace_until IS NULL) AND (revoked_at IS NULL));

--
-- Name: attachments_by_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attachments_by_account ON public.attachments USING btree (account_id, id DESC) WHERE (deleted_at IS NULL);

--
-- Name: attachments_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX attachments_pending ON public.attachments USING btree (upload_expires_at) WHERE (status = 'pending'::text);

--
-- Name: audit_log_by_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_by_account ON public.audit_log USING btree (account_id, id DESC);

--
-- Name: audit_log_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_by_time ON public.audit_log USING btree (at);

--
-- Name: chain_credits_recent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chain_credits_recent ON public.chain_credits USING btree (chain_id, seen_at) WHERE (reorged_at IS NULL);

--
-- Name: chain_credits_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chain_credits_request ON public.chain_credits USING btree (deposit_request_id);

--
-- Name: chain_credits_unapplied; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chain_credits_unapplied ON public.chain_credits USING btree (seen_at) WHERE (applied_at IS NULL);

--
-- Name: chain_credits_unpublished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chain_credits_unpublished ON public.chain_credits USING btree (block_number, log_index) WHERE ((published_at IS NULL) OR ((reorged_at IS NOT NULL) AND (reorg_published_at IS NULL)));

--
-- Name: customers_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX customers_account ON public.customers USING btree (account_id, id DESC) WHERE (deleted_at IS NULL);

--
-- Name: customers_account_email; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX customers_account_email ON public.customers USING btree (account_id, lower(email)) WHERE (email IS NOT NULL);

--
-- Name: dashboard_sessions_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX dashboard_sessions_account ON public.dashboard_sessions USING btree (account_id);

--
-- Name: dashboard_sessions_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX dashboard_sessions_id ON public.dashboard_sessions USING btree (id);

--
-- Name: dashboard_sessions_member; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX dashboard_sessions_member ON public.dashboard_sessions USING btree (member_id) WHERE (member_id IS NOT NULL);

--
-- Name: deposit_request_attachments_attachment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_request_attachments_attachment ON public.deposit_request_attachments USING btree (attachment_id);

--
-- Name: deposit_request_steps_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_request_steps_account ON public.deposit_request_steps USING btree (account_id, seq);

--
-- Name: deposit_request_steps_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_request_steps_seq ON public.deposit_request_steps USING btree (seq);

--
-- Name: deposit_requests_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account ON public.deposit_requests USING btree (account_id, id DESC);

--
-- Name: deposit_requests_account_created_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account_created_id ON public.deposit_requests USING btree (account_id, created_at DESC, id DESC);

--
-- Name: deposit_requests_account_expected_email; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account_expected_email ON public.deposit_requests USING btree (account_id, lower(expected_email), id DESC) WHERE (expected_email IS NOT NULL);

--
-- Name: deposit_requests_account_open_deadline; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account_open_deadline ON public.deposit_requests USING btree (account_id, expires_at) WHERE (status = ANY (ARRAY['awaiting_payer'::text, 'ready'::text, 'partially_deposited'::text]));

--
-- Name: deposit_requests_account_reference; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account_reference ON public.deposit_requests USING btree (account_id, reference, id DESC) WHERE (reference <> ''::text);

--
-- Name: deposit_requests_account_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account_status ON public.deposit_requests USING btree (account_id, status, id DESC);

--
-- Name: deposit_requests_account_status_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_account_status_created ON public.deposit_requests USING btree (account_id, status, created_at DESC, id DESC);

--
-- Name: deposit_requests_customer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_customer ON public.deposit_requests USING btree (customer_id, id DESC) WHERE (customer_id IS NOT NULL);

--
-- Name: deposit_requests_deposit_address; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_requests_deposit_address ON public.deposit_requests USING btree (deposit_address) WHERE (deposit_address IS NOT NULL);

--
-- Name: deposit_requests_deposit_index; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deposit_requests_deposit_index ON public.deposit_requests USING btree (deposit_index) WHERE (deposit_index IS NOT NULL);

--
-- Name: deposit_requests_issuer; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_issuer ON public.deposit_requests USING btree (issuer_id, id DESC);

--
-- Name: deposit_requests_needing_attention; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_needing_attention ON public.deposit_requests USING btree (id) WHERE (status = 'needs_attention'::text);

--
-- Name: deposit_requests_open_deadline; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_open_deadline ON public.deposit_requests USING btree (expires_at) WHERE (status = ANY (ARRAY['awaiting_payer'::text, 'ready'::text, 'partially_deposited'::text]));

--
-- Name: deposit_requests_payout_address; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deposit_requests_payout_address ON public.deposit_requests USING btree (payout_address_id, id DESC);

--
-- Name: held_transfers_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX held_transfers_request ON public.held_transfers USING btree (deposit_request_id);

--
-- Name: idempotency_keys_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_created ON public.idempotency_keys USING btree (created_at);

--
-- Name: issuers_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX issuers_account ON public.issuers USING btree (account_id, id DESC) WHERE (deleted_at IS NULL);

--
-- Name: lifecycle_events_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX lifecycle_events_account ON public.lifecycle_events USING btree (account_id, id DESC);

--
-- Name: lifecycle_events_account_time_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX lifecycle_events_account_time_id ON public.lifecycle_events USING btree (account_id, occurred_at DESC, id DESC);

--
-- Name: lifecycle_events_account_type_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX lifecycle_events_account_type_time ON public.lifecycle_events USING btree (account_id, type, occurred_at);

--
-- Name: lifecycle_events_account_type_time_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX lifecycle_events_account_type_time_id ON public.lifecycle_events USING btree (account_id, type, occurred_at DESC, id DESC);

--
-- Name: lifecycle_events_once; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX lifecycle_events_once ON public.lifecycle_events USING btree (deposit_request_id, dedupe);

--
-- Name: mailbox_codes_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mailbox_codes_request ON public.mailbox_codes USING btree (deposit_request_id, expires_at DESC);

--
-- Name: member_invites_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX member_invites_account ON public.member_invites USING btree (account_id, created_at);

--
-- Name: members_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX members_account ON public.members USING btree (account_id);

--
-- Name: members_live_email; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX members_live_email ON public.members USING btree (email) WHERE (removed_at IS NULL);

--
-- Name: outbox_unpublished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX outbox_unpublished ON public.outbox USING btree (id) WHERE (published_at IS NULL);

--
-- Name: passkeys_member; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX passkeys_member ON public.passkeys USING btree (member_id);

--
-- Name: payout_addresses_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payout_addresses_account ON public.payout_addresses USING btree (account_id, id DESC);

--
-- Name: payout_addresses_account_address; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX payout_addresses_account_address ON public.payout_addresses USING btree (account_id, lower(address));

--
-- Name: pending_notices_sent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pending_notices_sent ON public.pending_notices USING btree (sent_at) WHERE (sent_at IS NOT NULL);

--
-- Name: pending_notices_unsent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pending_notices_unsent ON public.pending_notices USING btree (account_id, id) WHERE (sent_at IS NULL);

--
-- Name: reconciliation_books_account_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reconciliation_books_account_created ON public.reconciliation_books USING btree (account_id, created_at, deposit_request_id);

--
-- Name: reconciliation_books_differing; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reconciliation_books_differing ON public.reconciliation_books USING btree (account_id, created_at, deposit_request_id) WHERE ledger_differs;

--
-- Name: reconciliation_books_in_custody; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reconciliation_books_in_custody ON public.reconciliation_books USING btree (account_id, created_at, deposit_request_id) WHERE (in_custody AND (NOT ledger_differs));

--
-- Name: reconciliation_entries_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reconciliation_entries_account ON public.reconciliation_entries USING btree (account_id);

--
-- Name: sign_in_attempts_client; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_attempts_client ON public.sign_in_attempts USING btree (client, at);

--
-- Name: sign_in_attempts_email; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_attempts_email ON public.sign_in_attempts USING btree (email, at) WHERE (email IS NOT NULL);

--
-- Name: sign_in_codes_email; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sign_in_codes_email ON public.sign_in_codes USING btree (email, created_at);

--
-- Name: transfers_nonce; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transfers_nonce ON public.transfers USING btree (tx_nonce);

--
-- Name: transfers_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transfers_open ON public.transfers USING btree (created_at) WHERE (state = 'signed'::text);

--
-- Name: transfers_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX transfers_request ON public.transfers USING btree (deposit_request_id);

--
-- Name: verification_attempts_bound_wallet; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX verification_attempts_bound_wallet ON public.verification_attempts USING btree (lower(wallet)) WHERE ((kind = 'wallet'::text) AND (outcome = 'accepted'::text));

--
-- Name: verification_attempts_proof_once; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX verification_attempts_proof_once ON public.verification_attempts USING btree (proof_digest) WHERE ((proof_digest IS NOT NULL) AND (outcome = 'accepted'::text));

--
-- Name: verification_attempts_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX verification_attempts_request ON public.verification_attempts USING btree (deposit_request_id, attempted_at);

--
-- Name: webhook_deliveries_endpoint; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint ON public.webhook_deliveries USING btree (endpoint_id, id DESC);

--
-- Name: webhook_deliveries_endpoint_failed_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint_failed_time ON public.webhook_deliveries USING btree (endpoint_id, attempted_at) WHERE (outcome = ANY (ARRAY['retrying'::text, 'failed'::text]));

--
-- Name: webhook_deliveries_endpoint_unsucceeded; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint_unsucceeded ON public.webhook_deliveries USING btree (endpoint_id, id DESC) WHERE (outcome <> 'succeeded'::text);

--
-- Name: webhook_deliveries_event; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_event ON public.webhook_deliveries USING btree (event_id);

--
-- Name: webhook_endpoints_account; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_account ON public.webhook_endpoints USING btree (account_id, id DESC);

--
-- Name: webhook_endpoints_live_listeners; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_live_listeners ON public.webhook_endpoints USING btree (last_polled_at) WHERE (listener AND (disabled_at IS NULL));

--
-- Name: webhook_jobs_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_jobs_due ON public.webhook_jobs USING btree (next_attempt_at) WHERE (state = 'pending'::text);

--
-- Name: webhook_jobs_endpoint_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_jobs_endpoint_due ON public.webhook_jobs USING btree (endpoint_id, next_attempt_at) WHERE (state = 'pending'::text);

--
-- Name: webhook_jobs_once; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_jobs_once ON public.webhook_jobs USING btree (endpoint_id, event_id) WHERE (NOT redelivery);

--
-- Name: webhook_jobs_unpublished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_jobs_unpublished ON public.webhook_jobs USING btree (created_at) WHERE (published_at IS NULL);

--
-- Name: audit_log audit_log_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER audit_log_append_only BEFORE DELETE OR UPDATE ON public.audit_log FOR EACH ROW EXECUTE FUNCTION public.refuse_audit_log_change();

--
-- Name: chain_credits chain_credits_reconciliation; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER chain_credits_reconciliation AFTER INSERT ON public.chain_credits REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_reconciliation_entries();

--
-- Name: deposit_requests deposit_requests_account_activity_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER deposit_requests_account_activity_delete AFTER DELETE ON public.deposit_requests REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_account_activity();

--
-- Name: deposit_requests deposit_requests_account_activity_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER deposit_requests_account_activity_insert AFTER INSERT ON public.deposit_requests REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_account_activity();

--
-- Name: deposit_requests deposit_requests_paused_notice; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER deposit_requests_paused_notice AFTER UPDATE OF status ON public.deposit_requests FOR EACH ROW WHEN (((new.status = 'needs_attention'::text) AND (old.status IS DISTINCT FROM 'needs_attention'::text))) EXECUTE FUNCTION public.queue_member_notice();

--
-- Name: deposit_requests deposit_requests_reconciliation; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER deposit_requests_reconciliation AFTER UPDATE ON public.deposit_requests FOR EACH ROW WHEN ((((old.status = 'settled'::text) IS DISTINCT FROM (new.status = 'settled'::text)) OR ((old.snapshot #> '{context,recoveries}'::text[]) IS DISTINCT FROM (new.snapshot #> '{context,recoveries}'::text[])))) EXECUTE FUNCTION public.record_reconciliation_entries();

--
-- Name: held_transfers held_transfers_return_notice; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER held_transfers_return_notice AFTER INSERT ON public.held_transfers FOR EACH ROW WHEN (((new.payload ->> 'type'::text) = 'return'::text)) EXECUTE FUNCTION public.queue_member_notice();

--
-- Name: lifecycle_events lifecycle_events_account_activity_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER lifecycle_events_account_activity_delete AFTER DELETE ON public.lifecycle_events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_account_activity();

--
-- Name: lifecycle_events lifecycle_events_account_activity_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER lifecycle_events_account_activity_insert AFTER INSERT ON public.lifecycle_events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_account_activity();

--
-- Name: lifecycle_events lifecycle_events_account_activity_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER lifecycle_events_account_activity_update AFTER UPDATE ON public.lifecycle_events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_account_activity();

--
-- Name: transfers transfers_reconciliation_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER transfers_reconciliation_delete AFTER DELETE ON public.transfers REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_reconciliation_entries();

--
-- Name: transfers transfers_reconciliation_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER transfers_reconciliation_insert AFTER INSERT ON public.transfers REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_reconciliation_entries();

--
-- Name: transfers transfers_reconciliation_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER transfers_reconciliation_update AFTER UPDATE ON public.transfers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.record_reconciliation_entries();

--
-- Name: webhook_deliveries webhook_deliveries_failed_notice; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER webhook_deliveries_failed_notice AFTER INSERT ON public.webhook_deliveries FOR EACH ROW WHEN ((new.outcome = 'failed'::text)) EXECUTE FUNCTION public.queue_member_notice();

--
-- Name: api_keys api_keys_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: attachments attachments_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.attachments
    ADD CONSTRAINT attachments_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: audit_log audit_log_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: customers customers_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.customers
    ADD CONSTRAINT customers_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: dashboard_sessions dashboard_sessions_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: dashboard_sessions dashboard_sessions_member_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_member_id_fkey FOREIGN KEY (member_id) REFERENCES public.members(id);

--
-- Name: deposit_request_attachments deposit_request_attachments_attachment_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_request_attachments
    ADD CONSTRAINT deposit_request_attachments_attachment_id_fkey FOREIGN KEY (attachment_id) REFERENCES public.attachments(id);

--
-- Name: deposit_request_attachments deposit_request_attachments_deposit_request_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_request_attachments
    ADD CONSTRAINT deposit_request_attachments_deposit_request_id_fkey FOREIGN KEY (deposit_request_id) REFERENCES public.deposit_requests(id);

--
-- Name: deposit_requests deposit_requests_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deposit_requests
    ADD CONSTRAINT deposit_requests_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: idempotency_keys idempotency_keys_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: issuers issuers_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.issuers
    ADD CONSTRAINT issuers_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: mailbox_codes mailbox_codes_deposit_request_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_codes
    ADD CONSTRAINT mailbox_codes_deposit_request_id_fkey FOREIGN KEY (deposit_request_id) REFERENCES public.deposit_requests(id);

--
-- Name: member_invites member_invites_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.member_invites
    ADD CONSTRAINT member_invites_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: member_invites member_invites_invited_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.member_invites
    ADD CONSTRAINT member_invites_invited_by_fkey FOREIGN KEY (invited_by) REFERENCES public.members(id);

--
-- Name: member_notice_preferences member_notice_preferences_member_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.member_notice_preferences
    ADD CONSTRAINT member_notice_preferences_member_id_fkey FOREIGN KEY (member_id) REFERENCES public.members(id) ON DELETE CASCADE;

--
-- Name: members members_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.members
    ADD CONSTRAINT members_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: members members_invited_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.members
    ADD CONSTRAINT members_invited_by_fkey FOREIGN KEY (invited_by) REFERENCES public.members(id);

--
-- Name: notice_deliveries notice_deliveries_notice_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notice_deliveries
    ADD CONSTRAINT notice_deliveries_notice_id_fkey FOREIGN KEY (notice_id) REFERENCES public.pending_notices(id) ON DELETE CASCADE;

--
-- Name: passkeys passkeys_member_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passkeys
    ADD CONSTRAINT passkeys_member_id_fkey FOREIGN KEY (member_id) REFERENCES public.members(id);

--
-- Name: payout_addresses payout_addresses_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payout_addresses
    ADD CONSTRAINT payout_addresses_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: rate_limit_buckets rate_limit_buckets_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: transfers transfers_deposit_request_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.transfers
    ADD CONSTRAINT transfers_deposit_request_id_fkey FOREIGN KEY (deposit_request_id) REFERENCES public.deposit_requests(id);

--
-- Name: verification_attempts verification_attempts_deposit_request_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_attempts
    ADD CONSTRAINT verification_attempts_deposit_request_id_fkey FOREIGN KEY (deposit_request_id) REFERENCES public.deposit_requests(id);

--
-- Name: webauthn_challenges webauthn_challenges_member_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webauthn_challenges
    ADD CONSTRAINT webauthn_challenges_member_id_fkey FOREIGN KEY (member_id) REFERENCES public.members(id);

--
-- Name: webhook_deliveries webhook_deliveries_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: webhook_deliveries webhook_deliveries_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id);

--
-- Name: webhook_deliveries webhook_deliveries_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.webhook_jobs(id);

--
-- Name: webhook_endpoints webhook_endpoints_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: webhook_jobs webhook_jobs_account_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_jobs
    ADD CONSTRAINT webhook_jobs_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

--
-- Name: webhook_jobs webhook_jobs_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_jobs
    ADD CONSTRAINT webhook_jobs_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id);

--
-- Name: webhook_jobs webhook_jobs_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_jobs
    ADD CONSTRAINT webhook_jobs_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.lifecycle_events(id);

--
-- PostgreSQL database dump complete
--
