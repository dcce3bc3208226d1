import { Context, Effect, Layer, Option } from "effect"
import type { AnvilOptions } from "../../infra/chain/Anvil"
import { actorHostLayer } from "./ActorHostRuntime"
import { createTestDatabase } from "./Database"
import pg from "pg"
import type { AppConfigShape } from "../../src/app/Config"
import { type MerchantClient, merchantClient } from "./Api"
import { type LocalChain, startLocalChain } from "./LocalChain"
import { createMerchant, type Merchant } from "./Merchant"
import { type RunningService, startService } from "./Service"

export interface ChainService {
  readonly service: RunningService
  readonly merchant: Merchant
  readonly api: MerchantClient
  /** A direct connection to the service's database, for what the API does not show. */
  readonly db: pg.Client
  readonly stop: () => Promise<void>
}

/**
 * The whole service on a local chain with a merchant, started once the watcher has placed its cursor (it starts
 * at the final block it first sees). On a chain that mines only on transactions, blocks are mined while waiting.
 */
export const startChainService = async (
  local: LocalChain,
  options: {
    readonly config?: Partial<AppConfigShape>
    readonly mineWhileWaiting?: boolean
    readonly service?: Omit<Parameters<typeof startService>[0], "config">
  } = {}
): Promise<ChainService> => {
  const service = await startService({
    ...options.service,
    config: {
      chainRpcUrl: Option.some(local.node.rpcUrl),
      tokenAddress: Option.some(local.token),
      rateLimitCapacity: 10_000,
      ...options.config
    }
  })
  const merchant = await createMerchant(service.databaseUrl)
  const db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
  const until = Date.now() + 15_000
  while (Date.now() < until && (await db.query("select 1 from chain_cursors")).rowCount === 0) {
    if (options.mineWhileWaiting === true) await local.chain.mine({ blocks: 1 })
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    service,
    merchant,
    api: merchantClient(service, merchant),
    db,
    stop: async () => {
      await db.end()
      await service.stop()
    }
  }
}

/**
 * For `it.layer`: a local chain and a database of its own, with a direct client for what the services do not show,
 * and the actor host's services over that database. One per test file: two in one file were seen to share the
 * first one's database.
 */
export class ChainFixture extends Context.Tag("test/ChainFixture")<
  ChainFixture,
  { readonly local: LocalChain; readonly databaseUrl: string; readonly db: pg.Client }
>() {}

export const chainFixture = (chainOptions: AnvilOptions = {}, config: Partial<AppConfigShape> = {}) => {
  const resources = Layer.scoped(
    ChainFixture,
    Effect.gen(function* () {
      const local = yield* Effect.acquireRelease(
        Effect.promise(() => startLocalChain(chainOptions)),
        (l) => Effect.promise(() => l.node.stop())
      )
      const database = yield* Effect.acquireRelease(
        Effect.promise(() => createTestDatabase()),
        (d) => Effect.promise(() => d.drop())
      )
      const db = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: database.url })
          await client.connect()
          return client
        }),
        (client) => Effect.promise(() => client.end())
      )
      return { local, databaseUrl: database.url, db }
    })
  )
  // The actor host's services over that database, as the service builds them.
  const services = Layer.unwrapEffect(Effect.map(ChainFixture, (f) => actorHostLayer(f.databaseUrl, config)))
  return services.pipe(Layer.provideMerge(resources))
}
