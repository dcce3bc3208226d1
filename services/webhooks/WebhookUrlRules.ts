import ipaddr from "ipaddr.js"
import { Config, Context, Effect, Layer } from "effect"
import { lookup } from "node:dns/promises"
import type { ServiceEnv } from "../domain/Environment"
import { serviceEnv } from "../platform/Settings"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Name resolution, as a layer: tests point a name at a local receiver without loosening the rules. */
export class WebhookResolver extends Context.Tag("deposits/WebhookResolver")<
  WebhookResolver,
  { readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<ResolvedAddress>, string> }
>() {
  static readonly system = Layer.succeed(WebhookResolver, {
    resolve: (hostname) =>
      Effect.tryPromise({
        try: () => lookup(hostname, { all: true, verbatim: true }),
        catch: () => `the name ${hostname} does not resolve`
      }).pipe(
        Effect.map((rows) =>
          rows.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }) as const)
        )
      )
  })
}

/**
 * Only globally routable unicast addresses: private, loopback, link-local, CGNAT, multicast, reserved,
 * unspecified, broadcast, unique-local and every IPv6 form that embeds an IPv4 address (mapped, 6to4, Teredo,
 * NAT64) are refused, after unwrapping an IPv4-mapped address to the IPv4 it carries.
 */
export const addressRefusal = (address: string): string | undefined => {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  }
  const range = parsed.range()
  return range === "unicast" ? undefined : `${address} is a ${range} address`
}

/** The rules that need no resolution: scheme, credentials, IP literals. Undefined when the URL passes them. */
export const staticRefusal = (raw: string, allowPrivate: boolean): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "it is not a valid URL"
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) return "it must use https://"
  if (url.username !== "" || url.password !== "") return "it must not contain credentials"
  if (url.hash !== "") return "it must not contain a fragment"
  // The WHATWG parser has already normalised decimal, hex and octal IPv4 forms to dotted quads.
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (!allowPrivate && ipaddr.isValid(host)) return "it must name a host, not an IP address"
  if (!allowPrivate && !host.includes(".")) return "it must name a public host"
  return undefined
}

/** Names that never leave the machine or the local network (RFC 6761 `localhost`, mDNS `.local`, `.internal`). */
const LOCAL_NAME = /(^|\.)(localhost|local|internal)$/i

/**
 * Whether a URL points at the developer's own machine or network: a loopback, private, link-local or otherwise
 * non-public IP literal, or a name that is not public (a single label, `localhost`, `*.local`, `*.internal`).
 */
export const isLocalReceiver = (raw: string): boolean => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return false
  }
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (ipaddr.isValid(host)) return addressRefusal(host) !== undefined
  return !host.includes(".") || LOCAL_NAME.test(host.replace(/\.$/, ""))
}

/** What the sandbox adds to a local receiver's refusal: the setting that allows it, and that it is read at start. */
export const SANDBOX_LOCAL_RECEIVER_HINT =
  "for a receiver on this machine, start the sandbox with WEBHOOKS_ALLOW_PRIVATE=true " +
  "(read at start: restart the service after setting it)"

/**
 * A refusal as the merchant reads it: in the sandbox, while `WEBHOOKS_ALLOW_PRIVATE` is off, a local receiver's
 * refusal names the setting that allows it. Production's refusals stay as they are: the setting is refused there.
 */
export const refusalFor = (reason: string, raw: string, env: ServiceEnv, allowPrivate: boolean): string =>
  env === "sandbox" && !allowPrivate && isLocalReceiver(raw)
    ? `${reason}; ${SANDBOX_LOCAL_RECEIVER_HINT}`
    : reason

/**
 * `WEBHOOKS_ALLOW_PRIVATE`, sandbox only: let webhooks reach http:// and private addresses (a receiver on a
 * developer's laptop). Production refuses to start with it.
 */
export const webhooksAllowPrivateSetting = Config.all({
  allowPrivate: Config.boolean("WEBHOOKS_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  serviceEnv
}).pipe(
  Config.validate({
    message: "WEBHOOKS_ALLOW_PRIVATE=true is refused when SERVICE_ENV=production",
    validation: (c) => !(c.serviceEnv === "production" && c.allowPrivate)
  }),
  Config.map((c) => c.allowPrivate)
)

/**
 * The URL rules, checked at creation and again before every delivery. One implementation over the resolver port,
 * which the composition root (or a test) chooses.
 */
export class WebhookUrlCheck extends Effect.Service<WebhookUrlCheck>()("deposits/WebhookUrlCheck", {
  effect: Effect.gen(function* () {
    const resolver = yield* WebhookResolver
    const webhooksAllowPrivate = yield* webhooksAllowPrivateSetting
    const env = yield* serviceEnv
    // Refusal reason, or the URL with the addresses the delivery may connect to (and no other). Untraced: it runs
    // before every delivery attempt, already inside that attempt's WebhookSender.send span.
    const resolve = Effect.fnUntraced(function* (raw: string) {
      const refusal = staticRefusal(raw, webhooksAllowPrivate)
      if (refusal !== undefined)
        return yield* Effect.fail(refusalFor(refusal, raw, env, webhooksAllowPrivate))
      const url = new URL(raw)
      const host = url.hostname.replace(/^\[|\]$/g, "")
      const addresses = ipaddr.isValid(host)
        ? [{ address: host, family: host.includes(":") ? 6 : 4 } as const]
        : yield* Effect.mapError(resolver.resolve(host), (reason) =>
            refusalFor(reason, raw, env, webhooksAllowPrivate)
          )
      if (addresses.length === 0) {
        return yield* Effect.fail(
          refusalFor(`the name ${host} has no address`, raw, env, webhooksAllowPrivate)
        )
      }
      if (!webhooksAllowPrivate) {
        // Every address must pass: one private answer among public ones refuses the name.
        for (const a of addresses) {
          const reason = addressRefusal(a.address)
          if (reason !== undefined) {
            // A public-looking name that resolves inward is as local as a literal: the sandbox names the setting.
            const refused = `${host} resolves to ${reason}`
            return yield* Effect.fail(
              env === "sandbox" ? `${refused}; ${SANDBOX_LOCAL_RECEIVER_HINT}` : refused
            )
          }
        }
      }
      return { url, addresses }
    })
    const check = Effect.fn("WebhookUrlCheck.check")((raw: string) => Effect.asVoid(resolve(raw)))
    return { resolve, check }
  })
}) {}
