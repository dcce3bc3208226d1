import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `apply_actor_steps` in three statements where 0024 ran five: the ids are read from the input once; an event
 * applied already is found under the row locks, beside the stale rows, instead of inserting every event and
 * deleting them again on a conflict; and the snapshots, the dedupe records, the lifecycle events and the outbox
 * rows are written by one statement. Only a holder of a request's row lock writes its applied events, always with
 * a new version of the row, so once the locked version is the one stepped from, the statement's snapshot already
 * shows every event applied to that request; a replay on one connection ran a block's lane faster (infra/decisions).
 * The lookups stay keyed and
 * sequential scans off, as in 0024.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create or replace function apply_actor_steps(p_steps jsonb)
    returns table (kind text, deposit_request_id uuid, event_id text) language plpgsql
    set enable_seqscan = off as $$
    #variable_conflict use_column
    declare
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
        select 'seen', a.deposit_request_id, a.event_id
        from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text)
        join applied_events a on a.deposit_request_id = e.deposit_request_id and a.event_id = e.event_id;
      if found then
        return;
      end if;
      -- What foreign keys would check row by row, once for the call: every event and lifecycle event belongs to a
      -- request of this call (locked above, so it exists), and every lifecycle event to that request's account.
      if exists (
        select 1 from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid)
        where e.deposit_request_id <> all(v_ids)
      ) or exists (
        -- A lifecycle event's request must be one of the call's and of its account: one probe checks both.
        select 1 from jsonb_to_recordset(p_steps->'lifecycle') as x(deposit_request_id uuid, account_id uuid)
        where not exists (
          select 1 from deposit_requests d
          where d.id = any(v_ids) and d.id = x.deposit_request_id and d.account_id = x.account_id)
      ) then
        raise exception 'apply_actor_steps: an event names a request outside the call, or another account'
          using errcode = 'foreign_key_violation';
      end if;
      -- Data-modifying CTEs all run to completion: the snapshots, the dedupe records (a conflict here is a broken
      -- invariant, so it fails the call), the lifecycle events and the outbox rows of the ones written.
      with stepped as (
        update deposit_requests d set
          status = u.status, version = u.version, snapshot = u.snapshot,
          received_base_units = u.received_base_units, deposit_address = u.deposit_address,
          updated_at = u.updated_at
        from jsonb_to_recordset(p_steps->'requests') as u(
          id uuid, version bigint, status text, snapshot jsonb, received_base_units numeric,
          deposit_address text, updated_at timestamptz)
        where d.id = any(v_ids) and d.id = u.id
      ), applied as (
        insert into applied_events (deposit_request_id, event_id, applied_at)
        select e.deposit_request_id, e.event_id, e.applied_at
        from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text, applied_at timestamptz)
      ), written as (
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
