import { Context, Effect, Layer } from "effect"
import pg from "pg"
import type { AppLive } from "../../src/app/Server"
import { type MerchantClient, merchantClient } from "./Api"
import { createTestDatabase } from "./Database"
import { localReceiverNetwork, type makeCertificates, startReceiver } from "./HttpsReceiver"
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

/** A service whose webhooks reach one local HTTPS receiver, and two merchant accounts on it (one to probe isolation). */
export class WebhookFixture extends Context.Tag("test/WebhookFixture")<
  WebhookFixture,
  {
    readonly receiver: Awaited<ReturnType<typeof startReceiver>>
    readonly service: RunningService
    readonly api: MerchantClient
    readonly other: MerchantClient
  }
>() {
  /** The receiver answers `respond`'s status (and `answer`'s body) for `host`; retries start after `firstRetryMs`. */
  static readonly layer = (options: {
    readonly host: string
    readonly tls: ReturnType<typeof makeCertificates>
    readonly firstRetryMs: number
    readonly respond?: Parameters<typeof startReceiver>[1]
    readonly answer?: Parameters<typeof startReceiver>[2]
  }) =>
    Layer.scoped(
      WebhookFixture,
      Effect.gen(function* () {
        const receiver = yield* scopedReceiver(options.tls, options.respond, options.answer)
        const service = yield* scopedService({
          webhookNetwork: localReceiverNetwork(options.host, options.tls.ca),
          config: { webhookFirstRetryMs: options.firstRetryMs, rateLimitCapacity: 10_000 }
        })
        return {
          receiver,
          service,
          api: yield* newMerchantClient(service),
          other: yield* newMerchantClient(service)
        }
      })
    )
}
