import { Option, Redacted } from "effect"
import { toHex } from "viem"
import { anvilDevAccount, DEV_ACCOUNT } from "../../infra/chain/Anvil"
import { browserHostOf } from "../../services/platform/Settings"
import type { AppConfigShape } from "./Config"

/**
 * The sandbox pays gas from the local chain's dev account 1 when no treasury key is set: a development
 * convenience chosen at the sandbox's start-up, so neither the production settings nor the treasury know a
 * development account.
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

/** What the sandbox's start-up banner needs to know, once the port is open. */
export interface SandboxFacts {
  /** Where a browser on this machine reaches the service: `PUBLIC_BASE_URL`, else the address it listens on. */
  readonly baseUrl: string
  /** `DASHBOARD_ORIGIN`, else the base URL: where the merchant dashboard is served (at /dashboard/). */
  readonly dashboardOrigin: string
  /** `SMTP_URL` is set: mail leaves through a relay instead of the log. */
  readonly mailRelay: boolean
  readonly webhooksAllowPrivate: boolean
}

/** The origin a browser on this machine uses for a listening address (`localhost` for loopback and wildcards). */
export const baseUrlOf = (publicBaseUrl: Option.Option<string>, hostname: string, port: number): string =>
  Option.getOrElse(
    Option.map(publicBaseUrl, (url) => url.replace(/\/+$/, "")),
    () => `http://${browserHostOf(hostname)}:${port}`
  )

/**
 * What a newcomer does next, printed once the sandbox's port is open: where the docs are, the command that makes a
 * merchant and a key, where a request's checkout lives, and what this log will show. Production prints none of it.
 */
export const sandboxBanner = (facts: SandboxFacts): string =>
  [
    `the sandbox is ready at ${facts.baseUrl}`,
    `  API reference (try requests in the browser):  ${facts.baseUrl}/docs`,
    `  the merchant dashboard (sign in by email):    ${facts.dashboardOrigin}/dashboard/`,
    facts.mailRelay
      ? "  dashboard sign-in codes:                      sent through SMTP_URL"
      : "  dashboard sign-in codes:                      logged here (no SMTP_URL set)",
    "  a merchant account and an API key:            npm run cli -- sandbox",
    `  a request's hosted checkout:                  ${facts.baseUrl}/checkout/dr_… (its checkout_url)`,
    facts.mailRelay
      ? "  payer mail codes:                             sent through SMTP_URL"
      : "  payer mail codes:                             logged here (no SMTP_URL set)",
    facts.webhooksAllowPrivate
      ? "  webhooks to a receiver on this machine:       allowed (WEBHOOKS_ALLOW_PRIVATE=true)"
      : "  webhooks to a receiver on this machine:       restart with WEBHOOKS_ALLOW_PRIVATE=true",
    "  each request's lifecycle:                     logged here, one line per change (lifecycle dr_…)"
  ].join("\n")
