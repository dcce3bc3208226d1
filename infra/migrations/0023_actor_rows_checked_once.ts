import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The actor host's one write statement inserted its dedupe records and lifecycle events through three foreign keys
 * (to the request, and the lifecycle event's to its account): a trigger and a locking lookup per row, about a fifth
 * of the statement for a block's credits (decision 0019). `apply_actor_steps` is the only writer of those rows
 * for requests, and it has just locked every request it writes for, so it now checks the same facts once per call
 * (each row's request is one of those it locked; each lifecycle event's account is its request's) and the keys
 * go. Requests and accounts are never deleted. The `webhook.test` event (no request) takes its account from the
 * authenticated key.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table applied_events drop constraint applied_events_deposit_request_id_fkey`
  yield* sql`alter table lifecycle_events drop constraint lifecycle_events_account_id_fkey`
  yield* sql`alter table lifecycle_events drop constraint lifecycle_events_deposit_request_id_fkey`
  yield* sql.unsafe(`
    create or replace function apply_actor_steps(p_steps jsonb)
    returns table (kind text, deposit_request_id uuid, event_id text) language plpgsql as $$
    #variable_conflict use_column
    declare
      v_fresh_requests uuid[];
      v_fresh_events text[];
    begin
      -- Lock the rows in id order (one writer per request; two calls cannot deadlock), then compare versions.
      return query
        with locked as materialized (
          select d.id, d.version from deposit_requests d
          where d.id in (select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid))
          order by d.id for update
        )
        select case when l.id is null then 'missing' else 'stale' end, r.id, null::text
        from jsonb_to_recordset(p_steps->'requests') as r(id uuid, expected_version bigint)
        left join locked l on l.id = r.id
        where l.id is null or l.version <> r.expected_version;
      if found then
        return;
      end if;
      -- What the foreign keys checked row by row, once for the call: every event and lifecycle event belongs to a
      -- request of this call (locked above, so it exists), and every lifecycle event to that request's account.
      if exists (
        select 1 from jsonb_to_recordset(p_steps->'events') as e(deposit_request_id uuid)
        where e.deposit_request_id not in (select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid))
      ) or exists (
        select 1 from jsonb_to_recordset(p_steps->'lifecycle') as x(deposit_request_id uuid, account_id uuid)
        where x.deposit_request_id not in (select r.id from jsonb_to_recordset(p_steps->'requests') as r(id uuid))
          or not exists (
            select 1 from deposit_requests d where d.id = x.deposit_request_id and d.account_id = x.account_id)
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
        where a.deposit_request_id = f.deposit_request_id and a.event_id = f.event_id;
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
      where d.id = u.id;
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
