-- The audit log is append-only (infra/decisions/0076-audit-log-and-security-notices.md): an UPDATE is always
-- refused, a DELETE only passes inside the retention sweep's transaction, which sets `deposits.audit_log_sweep`.
create or replace function refuse_audit_log_change() returns trigger
language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('deposits.audit_log_sweep', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_log is append-only: % refused', tg_op using errcode = '42501';
end
$$;
