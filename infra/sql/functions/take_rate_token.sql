-- take_rate_token: one token from an account's rate-limit bucket, in one round trip (migration 0001).
--
-- Not called by the service any more: the rate limiter takes a batch at once with take_rate_tokens (migration
-- 0010), which keeps the same refill rule. It stays until a migration drops it.
--
-- The bucket holds thousandths of a token and the last refill in epoch milliseconds. A missing bucket starts full
-- (`on conflict do nothing`); `for update` makes concurrent callers for one account queue on its row, so no two
-- take the same token; `greatest(refilled_at_ms, p_now_ms)` keeps an instance whose clock is behind from moving
-- the refill time back.
create or replace function take_rate_token(p_account uuid, p_now_ms bigint, p_capacity bigint, p_refill_per_ms bigint)
returns table (milli_tokens bigint, allowed boolean) language plpgsql as $$
declare refilled bigint;
begin
  insert into rate_limit_buckets as b (account_id, milli_tokens, refilled_at_ms)
  values (p_account, p_capacity, p_now_ms) on conflict (account_id) do nothing;
  select least(p_capacity, b.milli_tokens + greatest(0, p_now_ms - b.refilled_at_ms) * p_refill_per_ms)
    into refilled from rate_limit_buckets b where b.account_id = p_account for update;
  allowed := refilled >= 1000;
  milli_tokens := case when allowed then refilled - 1000 else refilled end;
  update rate_limit_buckets b
    set milli_tokens = take_rate_token.milli_tokens, refilled_at_ms = greatest(b.refilled_at_ms, p_now_ms)
    where b.account_id = p_account;
  return next;
end $$;
