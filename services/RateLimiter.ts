import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../src/Config"

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the bucket is full again. */
  readonly resetAt: number
}

/**
 * A second connection pool whose commits do not wait for the WAL flush: losing a few bucket updates in a crash
 * is harmless (callers get a few extra requests), and a durable commit per API call is not.
 */
export class EphemeralSql extends Context.Tag("deposits/EphemeralSql")<EphemeralSql, SqlClient.SqlClient>() {
  static readonly layer = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Option.match(config.databaseUrl, {
        onNone: () => Layer.effect(EphemeralSql, SqlClient.SqlClient),
        onSome: (url) => {
          const parsed = new URL(Redacted.value(url))
          parsed.searchParams.set("options", "-c synchronous_commit=off")
          return Layer.effect(EphemeralSql, SqlClient.SqlClient).pipe(
            Layer.provide(PgClient.layer({ url: Redacted.make(parsed.toString()), maxConnections: 8 }))
          )
        }
      })
    )
  )
}

const make = Effect.gen(function* () {
  const sql = yield* EphemeralSql
  const config = yield* AppConfig
  const capacityMilli = BigInt(config.rateLimitCapacity) * 1000n
  // Tokens per second equals milli-tokens per millisecond.
  const refillPerMs = BigInt(config.rateLimitRefillPerSecond)

  /**
   * Takes one token from the account's bucket in one statement, shared by every instance: the row is the bucket.
   * The refill since the last call is credited first, capped at the capacity.
   */
  const take = (accountId: string) =>
    Effect.gen(function* () {
      const nowMs = BigInt(yield* Clock.currentTimeMillis)
      const rows = yield* sql<{ milli_tokens: string; allowed: boolean }>`
        select milli_tokens, allowed from take_rate_token(
          ${accountId}, ${nowMs.toString()}, ${capacityMilli.toString()}, ${refillPerMs.toString()})`
      const row = rows[0]!
      const milli = BigInt(row.milli_tokens)
      const missingMs = (capacityMilli - milli + refillPerMs - 1n) / refillPerMs
      return {
        allowed: row.allowed,
        limit: config.rateLimitCapacity,
        remaining: Number(milli / 1000n),
        resetAt: Number((nowMs + missingMs + 999n) / 1000n)
      } satisfies RateDecision
    }).pipe(Effect.orDie)

  return { take } as const
})

export class RateLimiter extends Context.Tag("deposits/RateLimiter")<
  RateLimiter,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(RateLimiter, make).pipe(Layer.provide(EphemeralSql.layer))
}
