import type pg from "pg"

/**
 * An account's history made in bulk (issue 50's bench and the plan tests): `count` copies of one template request
 * of the account, made in SQL through the service's own tables, spread evenly over the last `spanDays` days and
 * as dense as a busy merchant's. Each copy gets its own UUIDv7 id (from its creation time, so id order is time
 * order, as the service's), deposit index and address, and a status from a fixed mix; every copy gets the template's
 * first two lifecycle events; every fourth its payment credit, transfers, bound wallet and recovery (its books balance); every twentieth an
 * attachment; every tenth a webhook delivery of its last event to `endpointId` (when given). Open copies expire a
 * month from now, so no deadline falls due while a bench runs, and every chain and outbox marker is set, so no
 * worker picks a copy up.
 *
 * `salt` (0–99) keeps two fills' ids and deposit indexes apart; `count` is at most 10,000,000. Returns the number of requests written.
 */
export interface HistoryFill {
  readonly accountId: string
  /** A request of the account (bare UUID) whose snapshot, events and ledger the copies take. */
  readonly templateId: string
  readonly count: number
  readonly salt: number
  readonly spanDays?: number
  readonly endpointId?: string
  /** Rows per statement (progress is reported after each). */
  readonly chunk?: number
  readonly progress?: (done: number) => void
}

/** A UUIDv7 in SQL from an instant and a counter: 48 bits of milliseconds, then the salt and the counter. */
const uuid7 = (at: string, counter: string) =>
  `(lpad(to_hex((extract(epoch from ${at}) * 1000)::bigint), 12, '0') || '7' || lpad(to_hex($4::int), 3, '0')
    || '8' || lpad(to_hex(${counter}), 15, '0'))::uuid`

/** The status of copy `i`: mostly finished, a few open, a very few paused. */
const STATUS = `case
  when i % 10000 = 0 then 'needs_attention'
  when i % 100 < 70 then 'settled'
  when i % 100 < 85 then 'expired'
  when i % 100 < 92 then 'returned'
  when i % 100 < 96 then 'ready'
  when i % 100 < 98 then 'awaiting_payer'
  when i % 100 = 98 then 'partially_deposited'
  else 'deposited' end`

export const fillHistory = async (db: pg.Client, fill: HistoryFill): Promise<number> => {
  const chunk = fill.chunk ?? 100_000
  const spanSeconds = (fill.spanDays ?? 365) * 86_400
  // Far above what `deposit_index_seq` hands out, so a request made through the API after a fill gets its own.
  const indexBase = 1_000_000_000 + fill.salt * 10_000_000
  for (let from = 1; from <= fill.count; from += chunk) {
    const to = Math.min(fill.count, from + chunk - 1)
    // $1 account, $2 template, $3 count, $4 salt, $5 span (s), $6 deposit index base, $7 from, $8 to, $9 endpoint.
    const params = [
      fill.accountId,
      fill.templateId,
      fill.count,
      fill.salt,
      spanSeconds,
      indexBase,
      from,
      to,
      fill.endpointId ?? null
    ]
    // Each statement is given the parameters up to the highest it names.
    const query = (text: string) =>
      db.query(text, params.slice(0, Math.max(...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))))
    const copies = `
      copies as (
        select i, ${uuid7("at", "i")} as id, at, $6::int + i as deposit_index
        from generate_series($7::int, $8::int) i,
          lateral (select now() - interval '1 hour' - make_interval(secs => ($3::int - i)::float8 * $5::int / $3::int)
            as at) t
        -- Every statement names the account and the template, so each binds the same leading parameters.
        where $1::uuid is not null and $2::uuid is not null)`
    // One transaction per chunk: its statements share `now()`, so they compute the same copies.
    await db.query("begin")
    await query(
      `with ${copies}
      insert into deposit_requests (id, account_id, status, version, machine_version, snapshot, amount_base_units,
        received_base_units, heading, reference, metadata, customer_id, issuer_id, payout_address_id,
        payer_policy_mode, expected_email, payer_reference, merchant_session_secret_digest, deposit_index,
        deposit_address, expires_at, created_at, updated_at, return_url)
      select c.id, t.account_id, ${STATUS}, t.version, t.machine_version, t.snapshot, t.amount_base_units,
        t.received_base_units, t.heading,
        case when i % 10 = 0 then 'order-' || $4::int || '-' || i else '' end, t.metadata, t.customer_id, t.issuer_id,
        t.payout_address_id, t.payer_policy_mode,
        case when i % 50 = 0 then 'payer' || $4::int || '-' || i || '@example.com' end, t.payer_reference, null,
        c.deposit_index, '0x' || lpad(to_hex($4::int), 8, '0') || lpad(to_hex(i), 32, '0'),
        case when ${STATUS} in ('awaiting_payer', 'ready', 'partially_deposited')
          then now() + interval '30 days' else c.at + interval '1 hour' end,
        c.at, c.at, t.return_url
      from copies c, deposit_requests t where t.id = $2 and t.account_id = $1`
    )
    // The template's first two events, a second apart.
    await query(
      `with ${copies},
      events as (
        select e.*, row_number() over (order by e.id) as k from lifecycle_events e
        where e.deposit_request_id = $2 order by e.id limit 2)
      insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
      select ${uuid7("(c.at + make_interval(secs => e.k))", "i * 4 + e.k")}, $1, c.id, e.type, e.dedupe, e.body,
        c.at + make_interval(secs => e.k)
      from copies c, events e`
    )
    await query(
      `with ${copies}
      insert into chain_credits (chain_id, tx_hash, log_index, block_number, block_hash, deposit_request_id,
        from_address, amount_base_units, seen_at, applied_at, published_at)
      select k.chain_id, '0x' || lpad(to_hex($4::int), 8, '0') || '1' || lpad(to_hex(i), 55, '0'), k.log_index,
        k.block_number, k.block_hash, c.id, k.from_address, k.amount_base_units, c.at, c.at, c.at
      from copies c, (select * from chain_credits where deposit_request_id = $2 limit 1) k
      where i % 4 = 0`
    )
    await query(
      `with ${copies}
      insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce, tx_hash,
        raw_tx, state, block_number, created_at, confirmed_at, signed_at)
      select 'bench-' || $4::int || '-' || i || '-' || t.kind, c.id, t.kind, t.to_address, t.amount_base_units,
        t.tx_nonce, '0x' || lpad(to_hex($4::int), 8, '0') || case when t.kind = 'settle' then '2' else '3' end
          || lpad(to_hex(i), 55, '0'),
        t.raw_tx, 'confirmed', t.block_number, c.at, c.at, c.at
      from copies c, transfers t
      where t.deposit_request_id = $2 and i % 4 = 0`
    )
    // The books see a recovery when the request's snapshot changes; a copy is inserted with the template's, so
    // its recovery is entered here, as the trigger would have, and a copy's books balance like the template's.
    await query(
      `with ${copies}
      insert into reconciliation_entries (account_id, deposit_request_id, created_at, amount_base_units,
        recovered_base_units)
      select $1, c.id, c.at, t.amount_base_units, r.recovered
      from copies c, deposit_requests t,
        lateral (select coalesce(sum((x ->> 'amount_base_units')::numeric), 0) as recovered
          from jsonb_array_elements(case when jsonb_typeof(t.snapshot #> '{context,recoveries}') = 'array'
            then t.snapshot #> '{context,recoveries}' else '[]' end) x) r
      where t.id = $2 and t.account_id = $1 and i % 4 = 0 and r.recovered <> 0`
    )
    await query(
      `with ${copies}
      insert into verification_attempts (id, deposit_request_id, kind, outcome, attempted_at, wallet)
      select ${uuid7("c.at", "i")}, c.id, 'wallet', 'accepted', c.at,
        '0x' || lpad(to_hex($4::int), 8, '0') || lpad(to_hex(i), 32, '0')
      from copies c where i % 4 = 0`
    )
    await query(
      `with ${copies},
      files as (
        insert into attachments (id, account_id, file_name, size_bytes, sha256, status, upload_expires_at, created_at,
          updated_at)
        select ${uuid7("c.at", "c.i")}, $1, 'invoice-' || c.i || '.pdf', 20000, repeat('0', 64), 'uploaded', c.at,
          c.at, c.at
        from copies c where c.i % 20 = 0
        returning id)
      insert into deposit_request_attachments (deposit_request_id, attachment_id, position)
      select c.id, ${uuid7("c.at", "c.i")}, 0 from copies c, (select count(*) from files) written
      where c.i % 20 = 0`
    )
    if (fill.endpointId !== undefined)
      await query(
        `with ${copies},
        events as (
          select e.*, row_number() over (order by e.id) as k from lifecycle_events e
          where e.deposit_request_id = $2 order by e.id limit 2),
        delivered as (
          -- The copy's last event, by the id its insert above gave it.
          select c.i, ${uuid7("(c.at + make_interval(secs => e.k))", "i * 4 + e.k")} as event_id, e.type,
            c.at + make_interval(secs => e.k) as occurred_at,
            ${uuid7("(c.at + make_interval(secs => e.k))", "c.i")} as job_id
          from copies c, (select * from events order by k desc limit 1) e
          where c.i % 10 = 0),
        jobs as (
          insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, attempts, state,
            next_attempt_at, created_at, published_at)
          select job_id, $1, $9, event_id, false, 1, 'succeeded', occurred_at, occurred_at, occurred_at
          from delivered returning id)
        insert into webhook_deliveries (id, account_id, endpoint_id, job_id, event_id, event_type, attempt,
          redelivery, outcome, response_status, attempted_at, duration_ms)
        select d.job_id, $1, $9, d.job_id, d.event_id, d.type, 1, false,
          case when d.i % 100 = 0 then 'retrying' else 'succeeded' end,
          case when d.i % 100 = 0 then 500 else 200 end, d.occurred_at + interval '1 second', 40
        from delivered d, (select count(*) from jobs) written`
      )
    await db.query("commit")
    fill.progress?.(to)
  }
  return fill.count
}
