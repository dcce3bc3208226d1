-- apply_actor_steps_v3: the actor host's write (services/actors/), one call per commit of stepped actors.
--
-- p_steps is { at, instance, requests, events, lifecycle, commands }: each request's new row with the version it
-- was stepped from, the events (their ids, and for the step history their version, type and payload, and the
-- snapshot and status they left when that is not the request's row of this call), the lifecycle events and the
-- outbox commands, all stamped with the one `at`. Either it writes nothing and answers one row per problem
-- (`missing`: no such request; `stale`: the row moved on since the step; `seen`: the event was applied already,
-- so the caller steps again without it), or it writes everything and answers no rows. History: migrations
-- 0019-0029 (`apply_actor_steps_v2`), 0035 (the step history).
--
-- - The step history (`deposit_request_steps`, migration 0035): one row per event that carries a `version` (the
--   caller leaves it out when history is off). An event's snapshot and status are sent only when a later event of
--   the same call stepped its request again; otherwise they are the request's row of this call, sent once.
-- - Rows are locked in id order: two calls cannot deadlock, and each request has one writer.
-- - No foreign keys on the dedupe records, lifecycle events and steps (migration 0023): this function is their
--   only writer and has just locked every request it writes for, so it checks once per call, not per row, that
--   each belongs to a request of the call. A lifecycle event and a step take their account from the row updated.
-- - Every lookup names its keys (`= any(v_ids)`; per event a `lateral (… limit 1)`, which cannot become a join)
--   and sequential scans are off: a session keeps its plans, and plans made while a table was small went on
--   scanning or hashing the whole table on every call (migrations 0024, 0029).
-- - `plan_cache_mode = force_generic_plan` (migration 0028): every row is reached through a key, so a custom plan
--   is no better at any size, yet PostgreSQL re-planned small calls each time, which cost more than running them.
-- - `_v3`: its input differs from `apply_actor_steps_v2`'s, which stays for the previous build during a rolling
--   deploy (a later migration drops it).
create or replace function apply_actor_steps_v3(p_steps jsonb)
returns table (kind text, deposit_request_id uuid, event_id text) language plpgsql
set enable_seqscan = off set plan_cache_mode = force_generic_plan as $$
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
