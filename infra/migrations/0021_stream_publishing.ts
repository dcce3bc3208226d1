import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Credits and webhook jobs travel on JetStream; PostgreSQL keeps what was published, and when. A credit is
 * published until it is applied; a job's row names the one message (`published_seq`, the stream sequence) that
 * carries it, so a stale copy (a re-publish after the stream lost it, a redelivery) is recognised and dropped.
 * Rows from before this migration were carried by PostgreSQL alone: they count as published.
 * A deployment (every instance on this database) gets a name of its own for its streams, so deployments, and
 * test runs, sharing one NATS server never consume each other's messages.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table deployment (
      only_row boolean primary key default true check (only_row),
      stream_namespace text not null
    )`
  yield* sql`insert into deployment (stream_namespace) values (substr(md5(random()::text || clock_timestamp()::text), 1, 12))`
  yield* sql`alter table chain_credits add column published_at timestamptz`
  yield* sql`update chain_credits set published_at = coalesce(applied_at, seen_at) where applied_at is not null`
  // A deep reorganisation's notice to the credit's request travels the same way, after the credit.
  yield* sql`alter table chain_credits add column reorg_published_at timestamptz, add column reorg_applied_at timestamptz`
  yield* sql`update chain_credits set reorg_published_at = reorged_at, reorg_applied_at = reorged_at where reorged_at is not null`
  yield* sql`create index chain_credits_unpublished on chain_credits (block_number, log_index)
    where published_at is null or (reorged_at is not null and reorg_published_at is null)`
  yield* sql`alter table webhook_jobs add column published_at timestamptz`
  yield* sql`alter table webhook_jobs add column published_seq bigint`
  yield* sql`alter table webhook_jobs add column publications integer not null default 0`
  yield* sql`update webhook_jobs set published_at = created_at where state <> 'pending'`
  yield* sql`create index webhook_jobs_unpublished on webhook_jobs (created_at) where published_at is null`
})
