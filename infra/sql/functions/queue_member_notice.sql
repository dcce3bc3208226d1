-- The notices mailed to an account's members (infra/decisions/0085-notices-by-email.md), queued by a trigger in the
-- transaction of their cause: a request entering needs_attention, a return held by the treasury, a webhook delivery
-- series failed for good. `cause` is unique, so one cause queues one notice however often the row is written.
create or replace function queue_member_notice() returns trigger
language plpgsql as $$
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
