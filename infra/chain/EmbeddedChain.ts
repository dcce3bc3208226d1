import { Effect, Option } from "effect"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type Address, createWalletClient, getAddress, http, publicActions } from "viem"
import { type AnvilOptions, anvilChain, startAnvil } from "./Anvil"
import { deployUsdc, holdsUsdcProxy } from "./deployUsdc"
import type { ServiceEnv } from "../../services/domain/Environment"
import { chainIdOf } from "../../services/domain/Environment"

/** The embedded chain's finality lag: finalized = latest − 2 × slots, 4 blocks. Its block time is `CHAIN_BLOCK_MS`. */
export const EMBEDDED_SLOTS_IN_AN_EPOCH = 2

/** What a running embedded chain tells other processes (the CLI's faucet): written on start, removed on stop. */
export interface EmbeddedChainInfo {
  readonly rpc_url: string
  readonly token_address: Address
}

/** The settings the embedded chain reads and completes. */
export interface ChainedConfig {
  readonly dataDir: string
  readonly serviceEnv: ServiceEnv
  readonly chainRpcUrl: Option.Option<string>
  readonly chainRpcUrls: Option.Option<string>
  readonly tokenAddress: Option.Option<string>
}

/** What starting the embedded chain reads besides: its block time (`CHAIN_BLOCK_MS`, whole milliseconds). */
export interface EmbeddedChainConfig extends ChainedConfig {
  readonly chainBlockMs: number
}

export const chainDir = (dataDir: string) => join(dataDir, "chain")
const infoFile = (dataDir: string) => join(chainDir(dataDir), "node.json")
const tokenFile = (dataDir: string) => join(chainDir(dataDir), "token.json")

/** The embedded chain a running `npm start` serves under this DATA_DIR, if any. */
export const readEmbeddedChain = (dataDir: string): Option.Option<EmbeddedChainInfo> => {
  const file = infoFile(dataDir)
  if (!existsSync(file)) return Option.none()
  return Option.some(JSON.parse(readFileSync(file, "utf8")) as EmbeddedChainInfo)
}

/**
 * The configuration with its chain: the configured one, or else the embedded chain a running `npm start` serves on
 * this DATA_DIR (for the CLI, which does not start one).
 */
export const withRunningChain = <C extends ChainedConfig>(config: C): C =>
  Option.isSome(config.chainRpcUrl) || Option.isSome(config.chainRpcUrls)
    ? config
    : Option.match(readEmbeddedChain(config.dataDir), {
        onNone: () => config,
        onSome: (chain) => withChain(config, chain)
      })

/** The configuration pointed at an embedded chain: its node and its token. */
export const withChain = <C extends ChainedConfig>(config: C, chain: EmbeddedChainInfo): C => ({
  ...config,
  chainRpcUrl: Option.some(chain.rpc_url),
  chainRpcUrls: Option.none(),
  tokenAddress: Option.some(chain.token_address as string)
})

/** How the embedded chain's anvil is started; anvil takes the block time in seconds, fractions allowed (0.4). */
export const embeddedAnvilOptions = (config: EmbeddedChainConfig): AnvilOptions => ({
  chainId: chainIdOf(config.serviceEnv),
  blockTime: config.chainBlockMs / 1000,
  mixedMining: true,
  slotsInAnEpoch: EMBEDDED_SLOTS_IN_AN_EPOCH,
  stateFile: join(chainDir(config.dataDir), "state.json"),
  stateIntervalSeconds: 5,
  readyTimeoutMs: 60_000,
  // The scope stops it on shutdown; under NodeRuntime.runMain its signal hooks would end the process first.
  handleSignals: false
})

/**
 * The embedded local chain of `npm start` in the sandbox: anvil on loopback with the sandbox chain id, a block
 * every `CHAIN_BLOCK_MS` (a second by default) and `finalized` lagging `latest` (so waiting for finality is
 * real), its state kept under DATA_DIR/chain across restarts. Circle's FiatToken v2.2 is deployed once behind
 * its proxy (dev account 0 holds its roles); its address is kept beside the state and deployed again only if the
 * chain no longer has it (the state file was removed).
 */
export const embeddedChain = (config: EmbeddedChainConfig) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      mkdirSync(chainDir(config.dataDir), { recursive: true })
      const node = await startAnvil(embeddedAnvilOptions(config))
      const client = createWalletClient({
        chain: anvilChain(node),
        transport: http(node.rpcUrl, { retryCount: 0 })
      }).extend(publicActions)
      const kept = existsSync(tokenFile(config.dataDir))
        ? getAddress(
            (JSON.parse(readFileSync(tokenFile(config.dataDir), "utf8")) as { address: string }).address
          )
        : undefined
      // A chain kept from an older sandbox may hold another token: Circle's proxy is deployed then.
      const token =
        kept !== undefined && (await holdsUsdcProxy(client, kept)) ? kept : (await deployUsdc(client)).address
      writeFileSync(tokenFile(config.dataDir), JSON.stringify({ address: token }))
      const info: EmbeddedChainInfo = { rpc_url: node.rpcUrl, token_address: token }
      writeFileSync(infoFile(config.dataDir), JSON.stringify(info))
      return { node, info }
    }),
    ({ node }) =>
      Effect.promise(async () => {
        rmSync(infoFile(config.dataDir), { force: true })
        await node.stop()
      })
  ).pipe(Effect.map(({ info }) => info))
