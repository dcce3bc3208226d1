import { ConfigProvider, Effect, Layer } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { addressRefusal, WebhookResolver, WebhookUrlCheck } from "../../../services/webhooks/WebhookUrlRules"

/** A resolver from a table; a list of lists answers differently on each resolution (DNS rebinding). */
const resolverFrom = (table: Record<string, Array<Array<string>>>) => {
  const calls = new Map<string, number>()
  return Layer.succeed(WebhookResolver, {
    resolve: (host) => {
      const answers = table[host]
      if (answers === undefined) return Effect.fail(`the name ${host} does not resolve`)
      const n = calls.get(host) ?? 0
      calls.set(host, n + 1)
      const list = answers[Math.min(n, answers.length - 1)] ?? []
      return Effect.succeed(
        list.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }))
      )
    }
  })
}

const table: Record<string, Array<Array<string>>> = {
  "public.example.com": [["93.184.216.34"]],
  "v6.example.com": [["2606:2800:220:1:248:1893:25c8:1946"]],
  "loopback.example.com": [["127.0.0.1"]],
  "ten.example.com": [["10.1.2.3"]],
  "metadata.example.com": [["169.254.169.254"]],
  "cgnat.example.com": [["100.64.0.1"]],
  "private172.example.com": [["172.16.0.5"]],
  "private192.example.com": [["192.168.1.1"]],
  "zero.example.com": [["0.0.0.0"]],
  "broadcast.example.com": [["255.255.255.255"]],
  "multicast.example.com": [["224.0.0.1"]],
  "v6loop.example.com": [["::1"]],
  "v6mapped.example.com": [["::ffff:127.0.0.1"]],
  "v6ula.example.com": [["fc00::1"]],
  "v6link.example.com": [["fe80::1"]],
  "nat64.example.com": [["64:ff9b::7f00:1"]],
  "sixtofour.example.com": [["2002:7f00:1::1"]],
  "teredo.example.com": [["2001:0::1"]],
  "mixed.example.com": [["93.184.216.34", "10.0.0.1"]],
  "rebind.example.com": [["93.184.216.34"], ["127.0.0.1"]]
}

/** The refusal reason of a URL, or undefined when it is accepted. */
const check = (
  url: string,
  resolver = resolverFrom(table),
  allowPrivate = false,
  env: "sandbox" | "production" = "sandbox"
) =>
  Effect.flatMap(WebhookUrlCheck, (c) => c.check(url)).pipe(
    Effect.match({ onFailure: (reason): string | undefined => reason, onSuccess: () => undefined }),
    Effect.provide(WebhookUrlCheck.Default),
    Effect.provide(resolver),
    Effect.withConfigProvider(
      ConfigProvider.fromMap(
        new Map([
          ["WEBHOOKS_ALLOW_PRIVATE", String(allowPrivate)],
          ["SERVICE_ENV", env]
        ])
      )
    )
  )

describe("webhook URL rules", () => {
  it.effect.each([
    "http://public.example.com/hook",
    "https://user:pass@public.example.com/hook",
    "https://user@public.example.com/hook",
    "https://127.0.0.1/hook",
    "https://10.0.0.1/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[::ffff:7f00:1]/hook",
    "https://0x7f.1/hook",
    "https://2130706433/hook",
    "https://0177.0.0.1/hook",
    "https://127.1/hook",
    "https://localhost/hook",
    "ftp://public.example.com/hook",
    "not a url",
    "https://loopback.example.com/hook",
    "https://ten.example.com/hook",
    "https://metadata.example.com/hook",
    "https://cgnat.example.com/hook",
    "https://private172.example.com/hook",
    "https://private192.example.com/hook",
    "https://zero.example.com/hook",
    "https://broadcast.example.com/hook",
    "https://multicast.example.com/hook",
    "https://v6loop.example.com/hook",
    "https://v6mapped.example.com/hook",
    "https://v6ula.example.com/hook",
    "https://v6link.example.com/hook",
    "https://nat64.example.com/hook",
    "https://sixtofour.example.com/hook",
    "https://teredo.example.com/hook",
    "https://mixed.example.com/hook",
    "https://unknown.example.com/hook"
  ])("refuses %s", (url: string) =>
    Effect.map(check(url), (refusal) => expect(refusal).toEqual(expect.any(String)))
  )

  it.effect("accepts public names over IPv4 and IPv6", () =>
    Effect.gen(function* () {
      expect(yield* check("https://public.example.com/hook")).toBeUndefined()
      expect(yield* check("https://v6.example.com:8443/hook?x=1")).toBeUndefined()
    })
  )

  it.effect(
    "checks again at each resolution, so a name rebinding to a private address is refused the second time",
    () =>
      Effect.gen(function* () {
        const resolver = resolverFrom(table)
        expect(yield* check("https://rebind.example.com/hook", resolver)).toBeUndefined()
        expect(yield* check("https://rebind.example.com/hook", resolver)).toMatch(/loopback/)
      })
  )

  it.effect("lets the sandbox reach a receiver on a developer's laptop only when allowed", () =>
    Effect.gen(function* () {
      expect(yield* check("http://loopback.example.com/hook", resolverFrom(table), true)).toBeUndefined()
      expect(yield* check("http://loopback.example.com/hook", resolverFrom(table), false)).toEqual(
        expect.any(String)
      )
    })
  )

  // Issue 35, item 5: a developer pointing the sandbox at a receiver on their laptop learns what allows it.
  it.effect.each([
    ["http://127.0.0.1:4000/hooks", "it must use https://"],
    ["http://localhost:3000/hooks", "it must use https://"],
    ["https://localhost/hooks", "it must name a public host"],
    ["https://localhost:8443/hooks", "it must name a public host"],
    ["https://127.0.0.1:8443/hooks", "it must name a host, not an IP address"],
    ["https://[::1]/hooks", "it must name a host, not an IP address"],
    ["https://192.168.1.20/hooks", "it must name a host, not an IP address"],
    ["https://laptop/hooks", "it must name a public host"],
    ["https://api.localhost/hooks", "a receiver on this machine"],
    ["https://loopback.example.com/hooks", "loopback.example.com resolves to 127.0.0.1 is a loopback address"]
  ])(
    "in the sandbox, refuses the local receiver %s naming WEBHOOKS_ALLOW_PRIVATE and a restart",
    ([url, reason]) =>
      Effect.map(check(url!), (refusal) => {
        expect(refusal).toContain(reason)
        expect(refusal).toContain(
          "; for a receiver on this machine, start the sandbox with WEBHOOKS_ALLOW_PRIVATE=true " +
            "(read at start: restart the service after setting it)"
        )
      })
  )

  it.effect("in production, a local receiver's refusal stays as it was and names no sandbox setting", () =>
    Effect.gen(function* () {
      const production = (url: string) => check(url, resolverFrom(table), false, "production")
      expect(yield* production("http://127.0.0.1:4000/hooks")).toBe("it must use https://")
      expect(yield* production("https://localhost/hooks")).toBe("it must name a public host")
      expect(yield* production("https://127.0.0.1/hooks")).toBe("it must name a host, not an IP address")
      expect(yield* production("https://loopback.example.com/hooks")).toBe(
        "loopback.example.com resolves to 127.0.0.1 is a loopback address"
      )
    })
  )

  it.effect("in the sandbox, a public receiver's refusal does not point at the private-address setting", () =>
    Effect.gen(function* () {
      expect(yield* check("http://public.example.com/hooks")).toBe("it must use https://")
      expect(yield* check("https://user@public.example.com/hooks")).toBe("it must not contain credentials")
      expect(yield* check("https://93.184.216.34/hooks")).toBe("it must name a host, not an IP address")
    })
  )

  it("classifies embedded IPv4 forms by the address they carry", () => {
    expect(addressRefusal("::ffff:8.8.8.8")).toBeUndefined()
    expect(addressRefusal("::ffff:10.0.0.1")).toMatch(/private/)
  })
})
