import {
  Config,
  type ConfigError,
  type ConfigProvider,
  Context,
  Effect,
  Either,
  Layer,
  Option,
  Redacted
} from "effect"
import { FINALIZED_TAG, type Finality, MAX_CONFIRMATIONS, parseFinality } from "../services/Finality"

/** Where the service runs: sandbox keys and chain 10143, or production keys and chain 143. */
export type ServiceEnv = "sandbox" | "production"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  /** Absent: the embedded PostgreSQL (PGlite) under `dataDir`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** Absent: the in-process bus. */
  readonly natsUrl: Option.Option<string>
  /** Absent: the embedded local chain. */
  readonly chainRpcUrl: Option.Option<string>
  /** When a block counts as final: the node's `finalized` tag (default) or N confirmations. */
  readonly chainFinality: Finality
  readonly serviceEnv: ServiceEnv
  readonly dashboardOrigin: string
  readonly checkoutOrigin: string
  /** Sandbox only: let webhooks reach http:// and private addresses (a receiver on a developer's laptop). */
  readonly webhooksAllowPrivate: boolean
  readonly inspectUrl: Option.Option<string>
  /** Token bucket per account on API-key traffic: capacity and refill per second. */
  readonly rateLimitCapacity: number
  readonly rateLimitRefillPerSecond: number
  /** Concurrent long polls one client address may hold; past it a poll answers at once. */
  readonly longPollMaxPerAddress: number
  /** First webhook retry gap; each next gap doubles, capped at one hour. */
  readonly webhookFirstRetryMs: number
  /** How long a claimed webhook job stays locked: past it, a crashed dispatcher's job is taken by another. */
  readonly webhookClaimTtlMs: number
  /** A broadcast transfer with no receipt after this long is replaced at the same nonce with higher fees. */
  readonly transferReplaceAfterMs: number
  /** The USDC token contract payers pay with (for payment links); unset until the chain is configured. */
  readonly tokenAddress: Option.Option<string>
  /** Where mail goes (smtp:// or smtps://); unset: kept in memory and logged, for local development. */
  readonly smtpUrl: Option.Option<string>
  readonly mailFrom: string
  /** The account that pays gas for settlements and returns; sandbox default: the local chain's dev account 1. */
  readonly treasuryKey: Option.Option<Redacted.Redacted>
}

const origin = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.validate({
      message: `${name}: must be an origin such as https://dashboard.example.com (scheme, host and optional port only)`,
      validation: (value) => {
        try {
          return new URL(value).origin === value
        } catch {
          return false
        }
      }
    })
  )

const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: must be at least 1`, validation: (n) => n >= 1 })
  )

/** An optional setting: unset or empty means "use the embedded default"; anything else must be valid. */
const optionalSetting = (name: string, message: string, validation: (value: string) => boolean) =>
  Config.option(Config.string(name)).pipe(
    Config.map(Option.filter((value) => value.trim() !== "")),
    Config.validate({
      message: `${name}: ${message}`,
      validation: (value) => Option.match(value, { onNone: () => true, onSome: validation })
    })
  )

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault(".data")),
  databaseUrl: optionalSetting("DATABASE_URL", "must be a postgres:// or postgresql:// URL", (url) =>
    /^postgres(ql)?:\/\//.test(url)
  ).pipe(Config.map(Option.map(Redacted.make))),
  natsUrl: optionalSetting("NATS_URL", "must be a nats:// URL or host:port", (url) =>
    /^(nats|tls):\/\/[^\s]+$|^[\w.-]+:\d+$/.test(url)
  ),
  chainRpcUrl: optionalSetting("CHAIN_RPC_URL", "must be an http(s) or ws(s) URL", (url) =>
    /^(https?|wss?):\/\//.test(url)
  ),
  chainFinality: Config.string("CHAIN_FINALITY").pipe(
    Config.withDefault("finalized"),
    Config.validate({
      message: `CHAIN_FINALITY: must be "finalized" or a number of confirmations from 1 to ${MAX_CONFIRMATIONS}`,
      validation: (text) => Either.isRight(parseFinality(text))
    }),
    Config.map((text) => Either.getOrThrow(parseFinality(text)))
  ),
  serviceEnv: Config.literal(
    "sandbox",
    "production"
  )("SERVICE_ENV").pipe(Config.withDefault("sandbox" as const)),
  dashboardOrigin: origin("DASHBOARD_ORIGIN", "http://localhost:3000"),
  checkoutOrigin: origin("CHECKOUT_ORIGIN", "http://localhost:3001"),
  webhooksAllowPrivate: Config.boolean("WEBHOOKS_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  inspectUrl: Config.option(Config.string("INSPECT_URL")),
  rateLimitCapacity: positiveInteger("RATE_LIMIT_CAPACITY", 60),
  rateLimitRefillPerSecond: positiveInteger("RATE_LIMIT_REFILL_PER_SECOND", 1),
  longPollMaxPerAddress: positiveInteger("LONG_POLL_MAX_PER_ADDRESS", 200),
  webhookFirstRetryMs: positiveInteger("WEBHOOK_FIRST_RETRY_MS", 30_000),
  transferReplaceAfterMs: positiveInteger("TRANSFER_REPLACE_AFTER_MS", 60_000),
  webhookClaimTtlMs: positiveInteger("WEBHOOK_CLAIM_TTL_MS", 60_000),
  treasuryKey: optionalSetting("TREASURY_PRIVATE_KEY", "must be a 0x-prefixed 32-byte hex key", (k) =>
    /^0x[0-9a-fA-F]{64}$/.test(k)
  ).pipe(Config.map(Option.map(Redacted.make))),
  smtpUrl: optionalSetting("SMTP_URL", "must be an smtp:// or smtps:// URL", (u) => /^smtps?:\/\//.test(u)),
  mailFrom: Config.string("MAIL_FROM").pipe(Config.withDefault("Deposits <no-reply@deposits.localhost>")),
  tokenAddress: optionalSetting("TOKEN_ADDRESS", "must be a 0x-prefixed 20-byte address", (a) =>
    /^0x[0-9a-fA-F]{40}$/.test(a)
  )
}).pipe(
  Config.validate({
    message: "WEBHOOKS_ALLOW_PRIVATE=true is refused when SERVICE_ENV=production",
    validation: (c) => !(c.serviceEnv === "production" && c.webhooksAllowPrivate)
  })
)

export class AppConfig extends Context.Tag("deposits/AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(AppConfig, appConfig)
  static readonly make = (overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
    port: 0,
    host: "127.0.0.1",
    dataDir: ".data",
    databaseUrl: Option.none(),
    natsUrl: Option.none(),
    chainRpcUrl: Option.none(),
    chainFinality: FINALIZED_TAG,
    serviceEnv: "sandbox",
    dashboardOrigin: "http://localhost:3000",
    checkoutOrigin: "http://localhost:3001",
    webhooksAllowPrivate: false,
    inspectUrl: Option.none(),
    rateLimitCapacity: 60,
    rateLimitRefillPerSecond: 1,
    longPollMaxPerAddress: 200,
    webhookFirstRetryMs: 30_000,
    transferReplaceAfterMs: 60_000,
    webhookClaimTtlMs: 60_000,
    tokenAddress: Option.none(),
    smtpUrl: Option.none(),
    treasuryKey: Option.none(),
    mailFrom: "Deposits <no-reply@deposits.localhost>",
    ...overrides
  })
  static readonly layerWith = (overrides: Partial<AppConfigShape> = {}) =>
    Layer.succeed(AppConfig, AppConfig.make(overrides))
}

/** One line naming the setting, for a start-up that must stop on bad configuration. */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      default:
        // A value that was read but refused carries no path: its message names the setting itself.
        lines.push(e.path.length > 0 ? `${e.path.join(".")}: ${e.message}` : e.message)
    }
  }
  walk(error)
  return `invalid configuration: ${lines.join("; ")}`
}

/** Loads the configuration from the environment, or fails with the one-line description. */
export const loadConfig = (provider?: ConfigProvider.ConfigProvider) => {
  const load = Effect.either(appConfig)
  return (provider ? Effect.withConfigProvider(load, provider) : load).pipe(
    Effect.flatMap(
      Either.match({ onLeft: (e) => Effect.fail(describeConfigError(e)), onRight: Effect.succeed })
    )
  )
}
