import { Config, Effect, Option } from "effect"
import { optionalSetting, publicBaseUrl } from "../../services/platform/Settings"

/**
 * `API`: the one setting naming the service the CLI talks to over HTTP, the same variable the README's quickstart
 * gives curl, so a service on another port is reached by every step without a second setting. Unset, the URL the
 * service prints on this machine's settings (`PUBLIC_BASE_URL`, or `http://localhost:PORT`).
 */
export const apiSetting = optionalSetting(
  "API",
  "must be the service's http(s) URL, such as http://localhost:8080",
  (url) => /^https?:\/\/[^/\s]+\/?$/.test(url)
)

export const serviceUrl: Config.Config<string> = Config.all({
  api: apiSetting,
  fallback: publicBaseUrl
}).pipe(Config.map(({ api, fallback }) => Option.getOrElse(api, () => fallback).replace(/\/+$/, "")))

/** The service a command talks to: its flag when given, else `API`, else the service's own URL. */
export const serviceUrlOf = (flag: string | undefined) =>
  flag === undefined ? serviceUrl : Effect.succeed(flag.replace(/\/+$/, ""))

/** `DASHBOARD_ORIGIN`, as the service reads it: where the dashboard is served when not on the service's origin. */
const dashboardOriginSetting = optionalSetting(
  "DASHBOARD_ORIGIN",
  "must be an origin such as https://dashboard.example.com (scheme, host and optional port only)",
  (url) => /^https?:\/\/[^/\s]+\/?$/.test(url)
)

/**
 * A dashboard link that opens this session's account: the token rides in the fragment, which no server and no log
 * sees, and the dashboard trades it for a fresh session at once, so the link works once.
 */
export const dashboardLink = (sessionToken: string) =>
  Effect.map(Config.all({ origin: dashboardOriginSetting, service: serviceUrl }), ({ origin, service }) => {
    const base = Option.getOrElse(
      Option.map(origin, (o) => o.replace(/\/+$/, "")),
      () => service
    )
    return `${base}/dashboard/#session=${encodeURIComponent(sessionToken)}`
  })
