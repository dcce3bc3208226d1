import { Effect, type Layer } from "effect"
import pg from "pg"
import type { AppLive } from "../../src/app/Server"
import { type MerchantClient, merchantClient } from "./Api"
import { createTestDatabase } from "./Database"
import { startReceiver } from "./HttpsReceiver"
import { createMerchant } from "./Merchant"
import { type RunningService, startService } from "./Service"

// The resources a service test starts, as scoped effects: each is stopped when the layer (or the scoped test) that
// acquired it closes, in the reverse order of acquisition.

/** A fresh database on the real PostgreSQL, dropped after. */
export const scopedDatabase = Effect.acquireRelease(Effect.promise(createTestDatabase), (db) =>
  Effect.promise(db.drop)
)

/** The whole service in this process (`startService`), stopped after. */
export const scopedService = (options?: Parameters<typeof startService>[0]) =>
  Effect.acquireRelease(
    Effect.promise(() => startService(options)),
    (service) => Effect.promise(() => service.stop())
  )

/** A PostgreSQL connection to a database, ended after. */
export const scopedPgClient = (connectionString: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  )

/** A local HTTPS webhook receiver (`startReceiver`), closed after. */
export const scopedReceiver = (...args: Parameters<typeof startReceiver>) =>
  Effect.acquireRelease(
    Effect.promise(() => startReceiver(...args)),
    (receiver) => Effect.promise(receiver.close)
  )

/** A new merchant account on the service's database, and its JSON client. */
export const newMerchantClient = (service: RunningService): Effect.Effect<MerchantClient> =>
  Effect.promise(async () => merchantClient(service, await createMerchant(service.databaseUrl)))

/** Runs an effect on a running service's own runtime: its services, the actor host say, as the service has them. */
export const onService = <A, E>(
  service: RunningService,
  effect: Effect.Effect<A, E, Layer.Layer.Success<typeof AppLive>>
): Effect.Effect<A> => Effect.promise(() => service.runtime.runPromise(effect))
