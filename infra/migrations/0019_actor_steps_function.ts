import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The actor host's write as one statement. The host steps the machines first, from snapshots it holds in memory
 * (or has just read), and sends what the steps wrote: each request's new row with the version it was stepped from,
 * the events' ids, the lifecycle events and the outbox rows. The function locks the rows in id order (one writer
 * per request) and then either writes nothing and answers why, one row per problem:
 * - `missing`: no such request;
 * - `stale`: the row's version is not the one the step started from (another writer, another instance);
 * - `seen`: the event was applied already (dedupe by event id, by the primary key's own index, under the row
 *   lock: the records this call had inserted are taken back);
 * or, with no problem, writes it all: the dedupe records, the rows, the lifecycle events (at most once per
 * request and dedupe key, by the unique index) and the outbox rows, those announcing a lifecycle event only when
 * that event was written. Alone it is its own transaction, so a step costs one round trip; inside a transaction
 * the locks it took stay held, so the caller can read, step again and call it once more without losing the rows.
 *
 * `p_steps` is `{ requests, events, lifecycle, outbox }`, arrays of the columns named below; outbox rows are
 * inserted in the order of their `n` (their ids keep the order the steps emitted them).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function apply_actor_steps(p_steps jsonb)
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
