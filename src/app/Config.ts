import { Config, type ConfigError, ConfigProvider, Effect, Either, Layer, Option, Redacted } from "effect"
import { natsUrlSetting } from "../../services/platform/Bus"
import { natsStreamReplicasSetting } from "../../services/platform/eventStream/EventStream"
import { inspectUrlSetting } from "../../services/actors/StepInspector"
import { stepHistoryDays } from "../../services/actors/StepHistorySettings"
import { instanceIdSetting } from "../../services/platform/Instance"
import { depositKeyMnemonic } from "../../services/chain/KeyVault"
import { mailerSettings } from "../../services/platform/Mailer"
import { rateLimitSettings } from "../../services/platform/RateLimiter"
import { publicBaseUrlSetting, dataDir, databaseUrl } from "../../services/platform/Settings"
import { treasurySettings } from "../../services/treasury/Treasury"
import { dispatchSettings } from "../../services/webhooks/WebhookDispatcher"
import { webhooksAllowPrivateSetting } from "../../services/webhooks/WebhookUrlRules"
import { chainEndpointSettings, embeddedChainSettings } from "../../services/chain/ChainSettings"
import { describeFinality } from "../../services/chain/Finality"
import { apiSettings } from "../http/middleware/ApiSettings"
import { metricsServerSettings } from "./MetricsServer"
import { tracingSettings } from "./Tracing"
import { attachmentSettings } from "../../services/merchants/Attachments"
import { signUpSetting } from "../../services/merchants/Members"
import { payoutAddressHoldSetting } from "../../services/merchants/MerchantResources"
import { signInLimits } from "../../services/merchants/SignInAttempts"
import { noticeBatchWindowMs } from "../../services/merchants/MemberNotices"
import { objectStoreSettings } from "../../services/platform/objectStore/ObjectStore"

/**
 * The composition root's view of settings. Each service declares and reads its own settings in its layer; here
 * they are gathered only to check them all before anything starts (one line naming each bad setting), to let the
 * start-up complete them (the embedded chain), and to hand them to the layers as one `ConfigProvider`.
 */

export { ApiSettings, type ApiSettingsShape, apiSettings } from "../http/middleware/ApiSettings"

/** Every setting of every service, flat, under the camel-case form of its environment name. */
export const appConfig = Config.all([
  apiSettings,
  Config.all({
    dataDir,
    databaseUrl,
    natsUrl: natsUrlSetting,
    natsStreamReplicas: natsStreamReplicasSetting,
    inspectUrl: inspectUrlSetting,
    stepHistoryDays,
    instanceId: instanceIdSetting,
    webhooksAllowPrivate: webhooksAllowPrivateSetting,
    signUp: signUpSetting,
    payoutAddressHoldSeconds: payoutAddressHoldSetting,
    noticeBatchWindowMs
  }),
  signInLimits,
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
  chainEndpointSettings,
  embeddedChainSettings
]).pipe(
  Config.map(
    ([
      api,
      base,
      signIn,
      tracing,
      objects,
      mail,
      rate,
      dispatch,
      treasury,
      depositKey,
      metrics,
      endpoints,
      embedded
    ]) => ({
      ...endpoints,
      ...embedded,
      ...signIn,
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
