import { Config, Either, Option } from "effect"
import { optionalSetting, positiveInteger, serviceEnv } from "../platform/Settings"
import { MAX_CONFIRMATIONS, parseFinality } from "./Finality"

/** The chain room's settings: which endpoints, how they are called, which token, when a block is final. */

const isHttpUrl = (url: string) => /^https?:\/\/\S+$/.test(url)

/** `CHAIN_RPC_URL`: one endpoint. Absent (and no `CHAIN_RPC_URLS`): the embedded local chain (sandbox) or none. */
const chainRpcUrl = optionalSetting("CHAIN_RPC_URL", "must be an http(s) URL", isHttpUrl)

/** `CHAIN_RPC_URLS`: several endpoints, comma-separated, most preferred first; replaces `CHAIN_RPC_URL`. */
const chainRpcUrlList = optionalSetting(
  "CHAIN_RPC_URLS",
  "must be http(s) URLs separated by commas",
  (list) => list.split(",").every((url) => isHttpUrl(url.trim()))
)

/** Every endpoint, in order of preference: `CHAIN_RPC_URLS`, else `CHAIN_RPC_URL`, else none. */
export const rpcEndpointsOf = (config: {
  readonly chainRpcUrl: Option.Option<string>
  readonly chainRpcUrls: Option.Option<string>
}): ReadonlyArray<string> =>
  Option.match(config.chainRpcUrls, {
    onNone: () => Option.toArray(config.chainRpcUrl),
    onSome: (list) => list.split(",").map((url) => url.trim())
  })

/** How the endpoints are called: time-out per call, rounds of retry, the lag that demotes an endpoint. */
export const chainEndpointSettings = Config.all({
  chainRpcUrl,
  chainRpcUrls: chainRpcUrlList,
  chainRpcTimeoutMs: positiveInteger("CHAIN_RPC_TIMEOUT_MS", 5_000),
  chainRpcRetries: Config.integer("CHAIN_RPC_RETRIES").pipe(
    Config.withDefault(2),
    Config.validate({
      message: "CHAIN_RPC_RETRIES: must be from 0 to 10",
      validation: (n) => n >= 0 && n <= 10
    })
  ),
  chainRpcMaxLagBlocks: positiveInteger("CHAIN_RPC_MAX_LAG_BLOCKS", 5),
  chainRpcProbeMs: positiveInteger("CHAIN_RPC_PROBE_MS", 2_000)
})
export type ChainEndpointSettings = Config.Config.Success<typeof chainEndpointSettings>

/** Bounds of `CHAIN_BLOCK_MS`: below 100 ms blocks outrun the watcher's 100 ms polling; a minute is plenty. */
export const CHAIN_BLOCK_MS_MIN = 100
export const CHAIN_BLOCK_MS_MAX = 60_000

/**
 * The embedded local chain's cadence (the sandbox with no endpoint set): `CHAIN_BLOCK_MS` milliseconds between
 * blocks, 1000 by default; 400 is Monad's. Ignored when an endpoint is configured (that chain keeps its own).
 */
export const embeddedChainSettings = Config.all({
  chainBlockMs: Config.string("CHAIN_BLOCK_MS").pipe(
    Config.withDefault("1000"),
    Config.validate({
      message: `CHAIN_BLOCK_MS: must be whole milliseconds from ${CHAIN_BLOCK_MS_MIN} to ${CHAIN_BLOCK_MS_MAX} (the embedded chain's block time, e.g. 400)`,
      validation: (text) => {
        if (!/^\s*\d+\s*$/.test(text)) return false
        const ms = Number(text)
        return ms >= CHAIN_BLOCK_MS_MIN && ms <= CHAIN_BLOCK_MS_MAX
      }
    }),
    Config.map(Number)
  )
})
export type EmbeddedChainSettings = Config.Config.Success<typeof embeddedChainSettings>

/** The chain the service watches and settles on; both unset: no chain (the watcher and treasury stay off). */
export const chainSettings = Config.all({
  chainRpcUrl,
  chainRpcUrls: chainRpcUrlList,
  /** When a block counts as final: the node's `finalized` tag (default) or N confirmations. */
  chainFinality: Config.string("CHAIN_FINALITY").pipe(
    Config.withDefault("finalized"),
    Config.validate({
      message: `CHAIN_FINALITY: must be "finalized" or a number of confirmations from 1 to ${MAX_CONFIRMATIONS}`,
      validation: (text) => Either.isRight(parseFinality(text))
    }),
    Config.map((text) => Either.getOrThrow(parseFinality(text)))
  ),
  /** The USDC token contract payers pay with. */
  tokenAddress: optionalSetting("TOKEN_ADDRESS", "must be a 0x-prefixed 20-byte address", (a) =>
    /^0x[0-9a-fA-F]{40}$/.test(a)
  ),
  serviceEnv
})
export type ChainSettings = Config.Config.Success<typeof chainSettings>
