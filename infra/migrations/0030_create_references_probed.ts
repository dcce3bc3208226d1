import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `create_deposit_requests` checks each create's issuer, payout address and customer with one probe by key, where
 * 0013 let the planner turn its `exists` checks into joins. PL/pgSQL keeps a session's plans, so a plan made while
 * `issuers` was small (a new deployment; autovacuum analyzes small tables early) read every issuer of every
 * account on each batch from then on. A `lateral` subquery with
 * `limit 1` cannot be flattened into a join, and with sequential scans off it reads through the primary key,
 * whatever the statistics say (as 0029 does for `applied_events`). The rest of the body is 0013's; same name and
 * input, so a build still calling it is unaffected.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create or replace function create_deposit_requests(p_rows jsonb, p_window_ms bigint)
    returns table (id uuid) language plpgsql
    set enable_seqscan = off as $$
    #variable_conflict use_column
    begin
      return query
      with input as (
        select * from jsonb_to_recordset(p_rows) as x(
          id uuid, account_id uuid, key text, fingerprint text, status text,
          machine_version integer, snapshot jsonb, amount_base_units numeric, received_base_units numeric,
          heading text, reference text, metadata jsonb, customer_id uuid, issuer_id uuid, payout_address_id uuid,
          payer_policy_mode text, expected_email text, payer_reference text, expires_at timestamptz,
          created_at timestamptz, secret_digest text)
      ),
      claimed as (
        insert into idempotency_keys as k (account_id, key, fingerprint, resource_id, created_at)
        select i.account_id, i.key, decode(i.fingerprint, 'hex'), i.id, i.created_at from input i
        cross join lateral (select 1 from issuers s
            where s.id = i.issuer_id and s.account_id = i.account_id and s.deleted_at is null limit 1) s
        cross join lateral (select 1 from payout_addresses p
            where p.id = i.payout_address_id and p.account_id = i.account_id and p.disabled_at is null limit 1) p
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
        merchant_session_secret_digest)
      select i.id, i.account_id, i.status, 1, i.machine_version, i.snapshot, i.amount_base_units,
        i.received_base_units, i.heading, i.reference, i.metadata, i.customer_id, i.issuer_id,
        i.payout_address_id, i.payer_policy_mode, i.expected_email, i.payer_reference, null, null, i.expires_at,
        i.created_at, i.created_at, decode(i.secret_digest, 'hex')
      from input i join claimed c on c.resource_id = i.id
      returning d.id;
    end $$`)
})
