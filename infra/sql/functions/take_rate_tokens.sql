-- take_rate_tokens: up to p_count tokens from an account's rate-limit bucket, in one round trip (migration 0010).
--
-- The rate limiter (services/platform/RateLimiter.ts) sends, per account, one call for all the requests that arrived while
-- the previous call was under way, so they share a round trip instead of queueing on the bucket's row one by one;
-- every token is still taken here, so the limit holds across instances. Answers the refilled balance and how many
-- tokens were granted; the caller grants them in arrival order.
--
-- The bucket holds thousandths of a token and the last refill in epoch milliseconds. A missing bucket starts full
-- (`on conflict do nothing`); `for update` makes concurrent callers for one account queue on its row, so no two
-- take the same token; `greatest(refilled_at_ms, p_now_ms)` keeps an instance whose clock is behind from moving
-- the refill time back.
create or replace function take_rate_tokens(
  p_account uuid, p_now_ms bigint, p_capacity bigint, p_refill_per_ms bigint, p_count integer)
returns table (refilled_milli bigint, granted integer) language plpgsql as $$
begin
  insert into rate_limit_buckets as b (account_id, milli_tokens, refilled_at_ms)
  values (p_account, p_capacity, p_now_ms) on conflict (account_id) do nothing;
  select least(p_capacity, b.milli_tokens + greatest(0, p_now_ms - b.refilled_at_ms) * p_refill_per_ms)
    into refilled_milli from rate_limit_buckets b where b.account_id = p_account for update;
  granted := least(p_count::bigint, refilled_milli / 1000)::integer;
  update rate_limit_buckets b
    set milli_tokens = refilled_milli - granted * 1000, refilled_at_ms = greatest(b.refilled_at_ms, p_now_ms)
    where b.account_id = p_account;
  return next;
end $$;
