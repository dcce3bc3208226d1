import { Config, Either, Option, Redacted } from "effect"
import type { ServiceEnv } from "../domain/Environment"
import { MAX_CONFIRMATIONS, parseFinality } from "../chain/Finality"

/**
 * How settings are read: each service declares the settings it needs beside its layer and reads them there
 * through Effect `Config`; the composition root only picks the `ConfigProvider` (the environment, or a map in
 * tests). Settings several services share are declared here once.
 */

/** An optional setting: unset or empty means "use the embedded default"; anything else must be valid. */
export const optionalSetting = (name: string, message: string, validation: (value: string) => boolean) =>
  Config.option(Config.string(name)).pipe(
    Config.map(Option.filter((value) => value.trim() !== "")),
    Config.validate({
      message: `${name}: ${message}`,
      validation: (value) => Option.match(value, { onNone: () => true, onSome: validation })
    })
  )

export const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: must be at least 1`, validation: (n) => n >= 1 })
  )

/** `SERVICE_ENV`: sandbox (test keys, chain 10143) or production (live keys, chain 143). */
export const serviceEnv: Config.Config<ServiceEnv> = Config.literal(
  "sandbox",
  "production"
)("SERVICE_ENV").pipe(Config.withDefault("sandbox" as const))

/**
 * `PUBLIC_BASE_URL`: the origin payers and merchants reach this service at, for the links it hands out (the hosted
 * checkout, uploads to the embedded store, attachment downloads). Unset: `http://HOST:PORT` (loopback for 0.0.0.0),
 * right for the sandbox; set it behind a proxy or a load balancer.
 */
export const publicBaseUrlSetting = optionalSetting(
  "PUBLIC_BASE_URL",
  "must be an http(s) origin such as https://pay.example.com",
  (url) => /^https?:\/\/[^/\s]+\/?$/.test(url)
)
export const publicBaseUrl: Config.Config<string> = Config.all({
  url: publicBaseUrlSetting,
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.integer("PORT").pipe(Config.withDefault(8080))
}).pipe(
  Config.map(({ url, host, port }) =>
    Option.getOrElse(
      Option.map(url, (u) => u.replace(/\/+$/, "")),
      () => `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`
    )
  )
)

/** `DATABASE_URL`: absent, the embedded PostgreSQL (PGlite) under `DATA_DIR`. */
export const databaseUrl = optionalSetting(
  "DATABASE_URL",
  "must be a postgres:// or postgresql:// URL",
  (url) => /^postgres(ql)?:\/\//.test(url)
).pipe(Config.map(Option.map(Redacted.make)))

/** `DATA_DIR`: where the embedded database and chain keep their files. */
export const dataDir = Config.string("DATA_DIR").pipe(Config.withDefault(".data"))

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
