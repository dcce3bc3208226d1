import { Config, Option } from "effect"
import { publicBaseUrl, serviceEnv } from "../platform/Settings"

/**
 * `SIGN_UP` = on|off: whether a verified unknown address gets an account of its own. Default on in the sandbox
 * (anyone tries it), off in production (accounts come from the operator's CLI and invitations).
 */
export const signUpSetting = Config.option(Config.literal("on", "off")("SIGN_UP"))
export const signUpOn = Config.all({ signUp: signUpSetting, serviceEnv }).pipe(
  Config.map(({ signUp, serviceEnv }) =>
    Option.match(signUp, { onNone: () => serviceEnv === "sandbox", onSome: (v) => v === "on" })
  )
)

/** `DASHBOARD_ORIGIN`, or the service's own origin: where the links in mails lead. */
export const dashboardOriginSetting = Config.all({
  origin: Config.option(Config.string("DASHBOARD_ORIGIN")),
  base: publicBaseUrl
}).pipe(
  Config.map(({ origin, base }) =>
    Option.getOrElse(
      Option.filter(origin, (o) => o.trim() !== ""),
      () => new URL(base).origin
    )
  )
)

/** A link into the dashboard whose secret rides in the fragment, which no server or proxy log sees. */
export const dashboardLink = (dashboardOrigin: string) => (fragment: string) =>
  `${dashboardOrigin}/dashboard/#${fragment}`

/** `a***@example.com`: enough to recognise the mailbox, not enough to learn it. */
export const maskEmail = (email: string) => {
  const [local = "", domain = ""] = email.split("@")
  return `${local.slice(0, 1)}***@${domain}`
}
