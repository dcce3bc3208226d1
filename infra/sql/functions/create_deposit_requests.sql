-- create_deposit_requests: the create's group commit (services/depositRequests/CreateGroupCommit.ts), one call per batch.
--
-- p_rows is a JSON array of the rows below. Claims each row's idempotency key, only where the row's issuer,
-- payout address and customer (if any) are still the account's own and live, and inserts the requests whose key
-- was claimed; a key older than p_window_ms is taken over, as if forgotten. Answers the ids inserted: a caller
-- whose id is missing reads and decides (the key was taken, or a reference changed, or the payout address is
-- still in its hold).
--
-- The hold (migration 0042): a payout address whose `held_until` is after the request's `created_at` (the
-- service's clock, as the caller's read compares it) is not live yet; only that row's claim is refused.
--
-- Why a function (migration 0013): sent as a statement, this CTE was parsed and planned for every batch;
-- PL/pgSQL keeps the plan of the statement inside it for the session, so a call plans only `select … from f(…)`.
--
-- Why `lateral (… limit 1)` with `enable_seqscan = off` (migration 0030): PL/pgSQL keeps a session's plans, and a
-- plan made while `issuers` was small (a new deployment) went on joining every account's issuers on each batch.
-- A lateral subquery with `limit 1` cannot be flattened into
-- a join, so each reference is one probe by primary key, whatever the statistics say.
--
-- `#variable_conflict use_column`: the output column `id` would otherwise clash with the tables' `id` columns.
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
