import {
  Config,
  type ConfigError,
  ConfigProvider,
  Context,
  Effect,
  Either,
  Layer,
  Option,
  Redacted
} from "effect"
import { toHex } from "viem"
import { anvilDevAccount, DEV_ACCOUNT } from "../infra/chain/Anvil"
import { natsUrlSetting } from "../services/platform/Bus"
import { inspectUrlSetting } from "../services/actors/StepInspector"
import { depositKeyMnemonic } from "../services/chain/KeyVault"
import { mailerSettings } from "../services/platform/Mailer"
import { rateLimitSettings } from "../services/platform/RateLimiter"
import {
  publicBaseUrl,
  publicBaseUrlSetting,
  dataDir,
  databaseUrl,
  positiveInteger,
  serviceEnv
} from "../services/platform/Settings"
import { treasurySettings } from "../services/treasury/Treasury"
import { dispatchSettings } from "../services/webhooks/WebhookDispatcher"
import { webhooksAllowPrivateSetting } from "../services/webhooks/WebhookUrlRules"
import { chainEndpointSettings } from "../services/chain/ChainSettings"
import { describeFinality } from "../services/chain/Finality"
import { metricsServerSettings } from "./MetricsServer"
import { tracingSettings } from "./Tracing"
import { attachmentSettings } from "../services/merchants/Attachments"
import { objectStoreSettings } from "../services/platform/objectStore/ObjectStore"

/**
 * The composition root's view of settings. Each service declares and reads its own settings in its layer; here
 * they are gathered only to check them all before anything starts (one line naming each bad setting), to let the
 * start-up complete them (the embedded chain), and to hand them to the layers as one `ConfigProvider`.
 */

const isOrigin = (value: string) => {
  try {
    return new URL(value).origin === value
  } catch {
    return false
  }
}
const originMessage = (name: string) =>
  `${name}: must be an origin such as https://dashboard.example.com (scheme, host and optional port only)`

const origin = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: originMessage(name), validation: isOrigin })
  )

/** The HTTP edge's own settings. */
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
  dashboardOrigin: origin("DASHBOARD_ORIGIN", "http://localhost:3000"),
  // Unset: the origin the hosted checkout is served from (resolved by the ApiSettings layer).
  checkoutOrigin: Config.option(Config.string("CHECKOUT_ORIGIN")).pipe(
    Config.validate({
      message: originMessage("CHECKOUT_ORIGIN"),
      validation: (value) => Option.match(value, { onNone: () => true, onSome: isOrigin })
    })
  ),
  /** Concurrent long polls one client address may hold; past it a poll answers at once. */
  longPollMaxPerAddress: positiveInteger("LONG_POLL_MAX_PER_ADDRESS", 200)
})
export type ApiSettingsShape = Omit<Config.Config.Success<typeof apiSettings>, "checkoutOrigin"> & {
  readonly checkoutOrigin: string
}

export class ApiSettings extends Context.Tag("deposits/ApiSettings")<ApiSettings, ApiSettingsShape>() {
  static readonly layer = Layer.effect(
    ApiSettings,
    Effect.map(Config.all([apiSettings, publicBaseUrl]), ([settings, base]) => ({
      ...settings,
      checkoutOrigin: Option.getOrElse(settings.checkoutOrigin, () => new URL(base).origin)
    }))
  )
}

/** Every setting of every service, flat, under the camel-case form of its environment name. */
export const appConfig = Config.all([
  apiSettings,
  Config.all({
    dataDir,
    databaseUrl,
    natsUrl: natsUrlSetting,
    inspectUrl: inspectUrlSetting,
    webhooksAllowPrivate: webhooksAllowPrivateSetting
  }),
  tracingSettings,
  Config.all([
    attachmentSettings,
    objectStoreSettings,
    Config.all({ publicBaseUrl: publicBaseUrlSetting })
  ]).pipe(Config.map(([attachment, store, url]) => ({ ...attachment, ...store, ...url }))),
  mailerSettings,
  rateLimitSettings,
  dispatchSettings,
  treasurySettings,
  // Read as set: whether it may serve this environment is one of the start-up refusals, on the same line as the rest.
  Config.all({ depositKeyMnemonic }),
  metricsServerSettings,
  chainEndpointSettings
]).pipe(
  Config.map(
    ([api, base, tracing, objects, mail, rate, dispatch, treasury, depositKey, metrics, endpoints]) => ({
      ...endpoints,
      ...tracing,
      ...objects,
      ...api,
      ...base,
      ...mail,
      ...rate,
      ...dispatch,
      ...treasury,
      ...depositKey,
      ...metrics
    })
  )
)
export type AppConfigShape = Config.Config.Success<typeof appConfig>

const environmentName = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()

const settingText = (value: unknown): string | undefined => {
  if (Option.isOption(value)) return Option.match(value, { onNone: () => undefined, onSome: settingText })
  if (Redacted.isRedacted(value)) return String(Redacted.value(value))
  if (typeof value === "object" && value !== null && "_tag" in value)
    return describeFinality(value as Parameters<typeof describeFinality>[0])
  return String(value)
}

/** Settings as the environment would carry them (`rateLimitCapacity: 5` → `RATE_LIMIT_CAPACITY=5`). */
export const settingsMap = (settings: Partial<AppConfigShape>): Map<string, string> => {
  const map = new Map<string, string>()
  for (const [key, value] of Object.entries(settings)) {
    const text = settingText(value)
    if (text !== undefined) map.set(environmentName(key), text)
  }
  return map
}

/** The provider every layer reads its settings from: exactly these settings, the defaults for the rest. */
export const settingsLayer = (settings: Partial<AppConfigShape>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(settingsMap(settings)))

/**
 * The sandbox pays gas from the local chain's dev account 1 when no treasury key is set: a development
 * convenience chosen here, at start-up, so the treasury itself knows no development account.
 */
export const withSandboxTreasury = (config: AppConfigShape): AppConfigShape =>
  config.serviceEnv === "sandbox" && Option.isNone(config.treasuryPrivateKey)
    ? {
        ...config,
        treasuryPrivateKey: Option.some(
          Redacted.make(toHex(anvilDevAccount(DEV_ACCOUNT.treasury).getHdKey().privateKey!))
        )
      }
    : config

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

/** Loads every setting from the environment (or the given provider), or fails with the one-line description. */
export const loadConfig = (provider?: ConfigProvider.ConfigProvider) => {
  const load = Effect.either(appConfig)
  return (provider ? Effect.withConfigProvider(load, provider) : load).pipe(
    Effect.flatMap(
      Either.match({ onLeft: (e) => Effect.fail(describeConfigError(e)), onRight: Effect.succeed })
    )
  )
}

/** The settings' defaults, with some replaced (tests and tools that build the service in process). */
export const defaultSettings = (overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
  ...Effect.runSync(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map()))),
  ...overrides
})
