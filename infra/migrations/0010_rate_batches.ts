import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Takes up to `p_count` tokens in one round trip, so the requests one instance has waiting on the same account
 * share a call instead of queueing on the row lock one by one. Same refill rule as `take_rate_token`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function take_rate_tokens(
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
    end $$`)
})
