import { Option } from "effect"
import pg from "pg"
import type { AppConfigShape } from "../../src/Config"
import { type MerchantClient, merchantClient } from "./Api"
import type { LocalChain } from "./LocalChain"
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
