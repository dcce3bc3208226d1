import { Config, Effect, Option } from "effect"
import { positiveInteger, publicBaseUrl, serviceEnv } from "../../../services/platform/Settings"

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
  /** Concurrent long polls one client address may hold; past it a poll answers at once. */
  longPollMaxPerAddress: positiveInteger("LONG_POLL_MAX_PER_ADDRESS", 200)
})
export type ApiSettingsShape = Omit<
  Config.Config.Success<typeof apiSettings>,
  "checkoutOrigin" | "dashboardOrigin"
> & {
  readonly dashboardOrigin: string
  readonly checkoutOrigin: string
  /** Served behind https (`PUBLIC_BASE_URL`): every answer tells browsers to use https only. */
  readonly httpsOnly: boolean
  /** `PUBLIC_BASE_URL` (no trailing slash), else the address the service listens on: what links start with. */
  readonly publicBaseUrl: string
}

/** The settings read once, at the layer's build; a test changes them through the configuration it provides. */
export class ApiSettings extends Effect.Service<ApiSettings>()("deposits/ApiSettings", {
  effect: Effect.map(
    Config.all([apiSettings, publicBaseUrl]),
    ([settings, base]): ApiSettingsShape => ({
      ...settings,
      dashboardOrigin: Option.getOrElse(settings.dashboardOrigin, () => new URL(base).origin),
      checkoutOrigin: Option.getOrElse(settings.checkoutOrigin, () => new URL(base).origin),
      httpsOnly: new URL(base).protocol === "https:",
      publicBaseUrl: base
    })
  )
}) {}
