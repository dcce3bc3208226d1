import { Effect, type Layer } from "effect"
import pg from "pg"
import { actorHostLayer } from "./ActorHostRuntime"
import { createTestDatabase } from "./Database"
import { createMerchant } from "./Merchant"

type ActorHostServices = Layer.Layer.Success<ReturnType<typeof actorHostLayer>>

/**
 * A fresh database with one merchant, seeded through the actor host's services (built for the seed and released
 * after it), then one PostgreSQL session on it that the tests keep: for tests of the SQL functions themselves,
 * which count what a call reads from that session's own statistics. The session ends, then the database is
 * dropped, when the scope closes.
 */
export const seededSqlSession = <A, E>(seed: (accountId: string) => Effect.Effect<A, E, ActorHostServices>) =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (d) => Effect.promise(d.drop))
    const accountId = (yield* Effect.promise(() => createMerchant(db.url))).accountId.slice("acct_".length)
    const seeded = yield* seed(accountId).pipe(Effect.provide(actorHostLayer(db.url)))
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: db.url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    )
    return { accountId, client, seeded }
  })
