import { Config, Effect, Option } from "effect"
import { chainEndpointSettings, rpcEndpointsOf } from "../../../services/chain/ChainSettings"
import { chainIdOf, type ServiceEnv } from "../../../services/domain/Environment"
import {
  optionalSetting,
  positiveInteger,
  publicBaseUrl,
  serviceEnv
} from "../../../services/platform/Settings"

const isOrigin = (value: string) => {
  try {
    return new URL(value).origin === value
  } catch {
    return false
  }
}
const originMessage = (name: string) =>
  `${name}: must be an origin such as https://dashboard.example.com (scheme, host and optional port only)`

const optionalOrigin = (name: string) =>
  Config.option(Config.string(name)).pipe(
    Config.validate({
      message: originMessage(name),
      validation: (value) => Option.match(value, { onNone: () => true, onSome: isOrigin })
    })
  )

/** An http(s) URL without credentials in it (`user:password@`): what may be handed to a payer's browser. */
const isPublicUrl = (value: string) => {
  try {
    const url = new URL(value)
    return /^https?:$/.test(url.protocol) && url.username === "" && url.password === ""
  } catch {
    return false
  }
}
const publicUrl = (name: string) =>
  optionalSetting(name, "must be an http(s) URL with no user or password in it", isPublicUrl)

/** A loopback node with nothing after its port (no path, no query): the embedded chain, which carries no key. */
const isBareLoopback = (value: string) => {
  try {
    const url = new URL(value)
    return (
      ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) &&
      url.username === "" &&
      url.pathname === "/" &&
      url.search === ""
    )
  } catch {
    return false
  }
}

/**
 * The network the hosted checkout asks a payer's wallet to add when the wallet does not know it (EIP-3085), and
 * the coin its fees are paid in. The RPC URL goes into the page: a public one only, never one with a key.
 */
export interface CheckoutNetwork {
  readonly chainId: number
  readonly name: string
  readonly coin: { readonly name: string; readonly symbol: string; readonly decimals: 18 }
  /** None: the page cannot add the network and asks the payer to add it in the wallet. */
  readonly rpcUrl: Option.Option<string>
  readonly explorerUrl: Option.Option<string>
}

/**
 * `CHAIN_PUBLIC_RPC_URL` and `CHAIN_EXPLORER_URL` as set, else per environment: Monad (143) and its public RPC and
 * explorer in production; in the sandbox, the embedded chain's own node (a bare loopback URL a browser on this
 * machine reaches; no explorer), else Monad Testnet's public RPC and explorer (decision 0092).
 */
export const checkoutNetworkOf = (config: {
  readonly serviceEnv: ServiceEnv
  readonly chainPublicRpcUrl: Option.Option<string>
  readonly chainExplorerUrl: Option.Option<string>
  readonly chainRpcUrl: Option.Option<string>
  readonly chainRpcUrls: Option.Option<string>
}): CheckoutNetwork => {
  const coin = { name: "Monad", symbol: "MON", decimals: 18 } as const
  const set = (option: Option.Option<string>, fallback: Option.Option<string>) =>
    Option.orElse(option, () => fallback)
  if (config.serviceEnv === "production")
    return {
      chainId: chainIdOf("production"),
      name: "Monad",
      coin,
      rpcUrl: set(config.chainPublicRpcUrl, Option.some("https://rpc.monad.xyz")),
      explorerUrl: set(config.chainExplorerUrl, Option.some("https://monadvision.com"))
    }
  const node = rpcEndpointsOf(config)
  const embedded = node.length === 1 && node[0] !== undefined && isBareLoopback(node[0])
  return {
    chainId: chainIdOf("sandbox"),
    name: "Monad Testnet",
    coin,
    rpcUrl: set(
      config.chainPublicRpcUrl,
      Option.some(embedded && node[0] !== undefined ? node[0] : "https://testnet-rpc.monad.xyz")
    ),
    explorerUrl: set(
      config.chainExplorerUrl,
      embedded ? Option.none() : Option.some("https://testnet.monadvision.com")
    )
  }
}

/** The HTTP edge's own settings; handlers and middleware take them as the `ApiSettings` service. */
export const apiSettings = Config.all({
  /** 0 picks a free port (tests). */
  port: Config.integer("PORT").pipe(
    Config.withDefault(8080),
    Config.validate({
      message: "PORT: must be a port number from 0 to 65535",
      validation: (n) => n >= 0 && n <= 65535
    })
  ),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  serviceEnv,
  // Unset: the origin the dashboard and the hosted checkout are served from (resolved by `ApiSettings.Default`).
  dashboardOrigin: optionalOrigin("DASHBOARD_ORIGIN"),
  checkoutOrigin: optionalOrigin("CHECKOUT_ORIGIN"),
  /** The chain's public RPC for payers' wallets (never one with a key): unset, per environment (0092). */
  chainPublicRpcUrl: publicUrl("CHAIN_PUBLIC_RPC_URL"),
  /** The chain's block explorer for payers' wallets: unset, per environment (0092). */
  chainExplorerUrl: publicUrl("CHAIN_EXPLORER_URL"),
  /** Concurrent long polls one client address may hold; past it a poll answers at once. */
  longPollMaxPerAddress: positiveInteger("LONG_POLL_MAX_PER_ADDRESS", 200)
})
export type ApiSettingsShape = Omit<
  Config.Config.Success<typeof apiSettings>,
  "checkoutOrigin" | "dashboardOrigin" | "chainPublicRpcUrl" | "chainExplorerUrl"
> & {
  readonly dashboardOrigin: string
  readonly checkoutOrigin: string
  /** Served behind https (`PUBLIC_BASE_URL`): every answer tells browsers to use https only. */
  readonly httpsOnly: boolean
  /** `PUBLIC_BASE_URL` (no trailing slash), else the address the service listens on: what links start with. */
  readonly publicBaseUrl: string
  /** The network the checkout names and asks a wallet to add (`CHAIN_PUBLIC_RPC_URL`, `CHAIN_EXPLORER_URL`). */
  readonly checkoutNetwork: CheckoutNetwork
}

/** The settings read once, at the layer's build; a test changes them through the configuration it provides. */
export class ApiSettings extends Effect.Service<ApiSettings>()("deposits/ApiSettings", {
  effect: Effect.map(
    Config.all([apiSettings, publicBaseUrl, chainEndpointSettings]),
    ([{ chainPublicRpcUrl, chainExplorerUrl, ...settings }, base, endpoints]): ApiSettingsShape => ({
      ...settings,
      checkoutNetwork: checkoutNetworkOf({
        serviceEnv: settings.serviceEnv,
        chainPublicRpcUrl,
        chainExplorerUrl,
        chainRpcUrl: endpoints.chainRpcUrl,
        chainRpcUrls: endpoints.chainRpcUrls
      }),
      dashboardOrigin: Option.getOrElse(settings.dashboardOrigin, () => new URL(base).origin),
      checkoutOrigin: Option.getOrElse(settings.checkoutOrigin, () => new URL(base).origin),
      httpsOnly: new URL(base).protocol === "https:",
      publicBaseUrl: base
    })
  )
}) {}
