import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `apply_actor_steps` joined its input to `deposit_requests` and let the planner choose how. PL/pgSQL keeps a
 * session's plans until the table's statistics change, so plans made while the table was small (a new database, or
 * a burst of creates before autovacuum's next analyze) went on scanning the whole primary key to lock 8 rows, and
 * hashing an account's every request to check a lifecycle event's account, several times slower than once
 * analyzed (infra/decisions). Every lookup of the table now names its keys (`= any(array(…))`) and
 * sequential scans are off inside the function, so no plan, however stale its statistics, reads more rows than the
 * call names. The rest of the body is 0023's.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create or replace function apply_actor_steps(p_steps jsonb)
    returns table (kind text, deposit_request_id uuid, event_id text) language plpgsql
    set enable_seqscan = off as $$
    #variable_conflict use_column
    declare
      v_fresh_requests uuid[];
      v_fresh_events text[];
    begin
      -- Lock the rows in id order (one writer per request; two calls cannot deadlock), then compare versions.
      return query
        with locked as materialized (
          select d.id, d.version from deposit_requests d
          where d.id = any(array(select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid)))
          order by d.id for update
        )
        select case when l.id is null then 'missing' else 'stale' end, r.id, null::text
        from jsonb_to_recordset(p_steps->'requests') as r(id uuid, expected_version bigint)
        left join locked l on l.id = r.id
        where l.id is null or l.version <> r.expected_version;
      if found then
        return;
      end if;
      -- What foreign keys would check row by row, once for the call: every event and lifecycle event belongs to a
      -- request of this call (locked above, so it exists), and every lifecycle event to that request's account.
      if exists (
        select 1 from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid)
        where e.deposit_request_id not in (select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid))
      ) or exists (
        select 1 from jsonb_to_recordset(p_steps->'lifecycle') as x(deposit_request_id uuid, account_id uuid)
        where x.deposit_request_id not in (select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid))
          or not exists (
            select 1 from deposit_requests d
            where d.id = any(array(select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid)))
              and d.id = x.deposit_request_id and d.account_id = x.account_id)
      ) then
        raise exception 'apply_actor_steps: an event names a request outside the call, or another account'
          using errcode = 'foreign_key_violation';
      end if;
      -- Dedupe by the primary key itself (an index probe per event, whatever the table's size); an event applied
      -- already undoes this call's records and is answered, so the caller steps again without it.
      with fresh as (
        insert into applied_events as a (deposit_request_id, event_id, applied_at)
        select e.deposit_request_id, e.event_id, e.applied_at
        from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text, applied_at timestamptz)
        on conflict do nothing
        returning a.deposit_request_id, a.event_id
      )
      select coalesce(array_agg(f.deposit_request_id), '{}'), coalesce(array_agg(f.event_id), '{}')
      into v_fresh_requests, v_fresh_events from fresh f;
      if cardinality(v_fresh_events) < jsonb_array_length(p_steps->'events') then
        delete from applied_events a
        using unnest(v_fresh_requests, v_fresh_events) as f(deposit_request_id, event_id)
        where a.deposit_request_id = any(v_fresh_requests)
          and a.deposit_request_id = f.deposit_request_id and a.event_id = f.event_id;
        return query
          select 'seen'::text, e.deposit_request_id, e.event_id
          from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text)
          where not exists (
            select 1 from unnest(v_fresh_requests, v_fresh_events) as f(deposit_request_id, event_id)
            where f.deposit_request_id = e.deposit_request_id and f.event_id = e.event_id);
        return;
      end if;
      update deposit_requests d set
        status = u.status, version = u.version, snapshot = u.snapshot,
        received_base_units = u.received_base_units, deposit_address = u.deposit_address,
        updated_at = u.updated_at
      from jsonb_to_recordset(p_steps->'requests') as u(
        id uuid, version bigint, status text, snapshot jsonb, received_base_units numeric,
        deposit_address text, updated_at timestamptz)
      where d.id = any(array(select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid))) and d.id = u.id;
      with written as (
        insert into lifecycle_events as l (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
        select x.id, x.account_id, x.deposit_request_id, x.type, x.dedupe, x.body, x.occurred_at
        from jsonb_to_recordset(p_steps->'lifecycle') as x(
          id uuid, account_id uuid, deposit_request_id uuid, type text, dedupe text, body text,
          occurred_at timestamptz)
        on conflict (deposit_request_id, dedupe) do nothing
        returning l.id
      )
      insert into outbox (topic, deposit_request_id, payload, created_at, trace_parent)
      select o.topic, o.deposit_request_id, o.payload::jsonb, o.created_at, o.trace_parent
      from jsonb_to_recordset(p_steps->'outbox') as o(
        n integer, topic text, deposit_request_id uuid, payload text, created_at timestamptz, trace_parent text,
        lifecycle_id uuid)
      where o.lifecycle_id is null or o.lifecycle_id in (select w.id from written w)
      order by o.n;
    end $$`)
})
