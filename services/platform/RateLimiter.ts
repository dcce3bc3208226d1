import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { databaseUrl, positiveInteger } from "./Settings"
import { makeBatcher } from "./Batcher"

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the bucket is full again. */
  readonly resetAt: number
}

/**
 * A second connection pool whose commits do not wait for the WAL flush: losing a few bucket updates in a crash
 * is harmless (callers get a few extra requests), and a durable commit per API call is not. The embedded database
 * (no `DATABASE_URL`) has one connection, so the buckets share it. The pool lives as long as the rate limiter.
 */
const ephemeralSql = Effect.gen(function* () {
  const url = yield* databaseUrl
  if (Option.isNone(url)) return yield* SqlClient.SqlClient
  const parsed = new URL(Redacted.value(url.value))
  parsed.searchParams.set("options", "-c synchronous_commit=off")
  const pool = yield* Layer.build(
    PgClient.layer({ url: Redacted.make(parsed.toString()), maxConnections: 8 })
  )
  return Context.get(pool, SqlClient.SqlClient)
})

/** The token bucket per account on API-key traffic: `RATE_LIMIT_CAPACITY` and `RATE_LIMIT_REFILL_PER_SECOND`. */
export const rateLimitSettings = Config.all({
  rateLimitCapacity: positiveInteger("RATE_LIMIT_CAPACITY", 60),
  rateLimitRefillPerSecond: positiveInteger("RATE_LIMIT_REFILL_PER_SECOND", 1)
})

/** At most this many waiting requests share one round trip. */
const MAX_BATCH = 256

const make = Effect.gen(function* () {
  const sql = yield* ephemeralSql
  const config = yield* rateLimitSettings
  const capacityMilli = BigInt(config.rateLimitCapacity) * 1000n
  // Tokens per second equals milli-tokens per millisecond.
  const refillPerMs = BigInt(config.rateLimitRefillPerSecond)

  const decide = (allowed: boolean, milli: bigint, nowMs: bigint): RateDecision => {
    const missingMs = (capacityMilli - milli + refillPerMs - 1n) / refillPerMs
    return {
      allowed,
      limit: config.rateLimitCapacity,
      remaining: Number(milli / 1000n),
      resetAt: Number((nowMs + missingMs + 999n) / 1000n)
    }
  }

  /**
   * One statement against the row that is the bucket, shared by every instance: the refill since the last call is
   * credited first (capped at the capacity), then up to `count` tokens are taken, in arrival order. Each request
   * gets the decision it would have had alone, as if the batch had gone through one by one.
   */
  const takeTokens = (accountId: string, count: number) =>
    Effect.gen(function* () {
      const nowMs = BigInt(yield* Clock.currentTimeMillis)
      const rows = yield* sql<{ refilled_milli: string; granted: number }>`
        select refilled_milli, granted from take_rate_tokens(
          ${accountId}, ${nowMs.toString()}, ${capacityMilli.toString()}, ${refillPerMs.toString()}, ${count})`
      const refilled = BigInt(rows[0]!.refilled_milli)
      const granted = rows[0]!.granted
      const left = refilled - BigInt(granted) * 1000n
      return Array.from({ length: count }, (_, i) =>
        i < granted ? decide(true, refilled - BigInt(i + 1) * 1000n, nowMs) : decide(false, left, nowMs)
      )
    })

  /**
   * Requests for one account that arrive while a round trip for it is under way share the next one: under load
   * an instance makes one call per round trip instead of one per request, and every token is still taken in
   * PostgreSQL before its request is answered (no local allowance, so the limit stays exact across instances).
   */
  const batcher = makeBatcher({
    maxBatch: MAX_BATCH,
    maxInFlight: 1,
    run: (accountId: string, batch: ReadonlyArray<null>) => takeTokens(accountId, batch.length),
    // One account's identical calls with no caller input: a failure is never one member's, so it is not split.
    isolate: () => false
  })

  // Every API-key request takes a token: untraced, since a span per call costs far more than the call here.
  const take = Effect.fnUntraced(function* (accountId: string) {
    return yield* batcher.submit(accountId, null).pipe(Effect.orDie)
  })

  return { take } as const
})

export class RateLimiter extends Effect.Service<RateLimiter>()("deposits/RateLimiter", { scoped: make }) {}
