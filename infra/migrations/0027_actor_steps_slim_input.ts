import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `apply_actor_steps_v2`: what 0025's `apply_actor_steps` does, from a slimmer input. Every byte of the input is
 * written by node, sent over the socket and parsed as `jsonb` by PostgreSQL: a block's lane of 125 funding credits
 * was mostly fields the database can derive.
 * - One `at` for the call: every step of a commit is stamped with the same instant (the rows' `updated_at`, the
 *   dedupe records' `applied_at`, the lifecycle events' `occurred_at`, the outbox rows' `created_at`).
 * - A lifecycle event's outbox row (`lifecycle`, `{"event_id": …}`) is made here from the event, and only for one
 *   actually written (not a duplicate by its dedupe key); each carries `n`, its place among the commit's outbox
 *   rows, so commands and announcements keep the order the steps emitted them in.
 * - A lifecycle event's account is its request's, read from the row this call updates: no account travels, and
 *   none can be wrong, so the probe 0025 made per lifecycle event is gone.
 * - `dedupe` is left out when it is the type itself (the at-most-once types); a command's payload is JSON, not
 *   JSON in a string; `trace_parent` is left out where there is none.
 * A new name, not `create or replace`: during a rolling deploy the previous build still calls `apply_actor_steps`
 * with its own input, which keeps working until a later migration drops it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function apply_actor_steps_v2(p_steps jsonb)
    returns table (kind text, deposit_request_id uuid, event_id text) language plpgsql
    set enable_seqscan = off as $$
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
        select 'seen', a.deposit_request_id, a.event_id
        from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid, event_id text)
        join applied_events a on a.deposit_request_id = e.deposit_request_id and a.event_id = e.event_id;
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
    end $$`)
})
