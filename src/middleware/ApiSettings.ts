import { Config, Context, Effect, Layer, Option } from "effect"
import { positiveInteger, publicBaseUrl, serviceEnv } from "../../services/platform/Settings"

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
