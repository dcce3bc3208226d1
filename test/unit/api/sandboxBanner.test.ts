import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { baseUrlOf, sandboxBanner } from "../../../src/app/SandboxStart"

describe("the sandbox's start banner", () => {
  it("names the origin a browser on this machine uses: PUBLIC_BASE_URL, else localhost for loopback and wildcards", () => {
    expect(baseUrlOf(Option.some("https://pay.example.com/"), "0.0.0.0", 8080)).toBe(
      "https://pay.example.com"
    )
    // Loopback and wildcard binds print `localhost`: the name passkeys accept (127.0.0.1 is not a domain).
    expect(baseUrlOf(Option.none(), "0.0.0.0", 8080)).toBe("http://localhost:8080")
    expect(baseUrlOf(Option.none(), "::", 8080)).toBe("http://localhost:8080")
    expect(baseUrlOf(Option.none(), "127.0.0.1", 43001)).toBe("http://localhost:43001")
    expect(baseUrlOf(Option.none(), "::1", 8080)).toBe("http://[::1]:8080")
    expect(baseUrlOf(Option.none(), "10.0.0.7", 8080)).toBe("http://10.0.0.7:8080")
  })

  it("says where mail codes go and whether a receiver on this machine is reachable, as configured", () => {
    const base = "http://127.0.0.1:8080"
    const plain = sandboxBanner({
      baseUrl: base,
      dashboardOrigin: base,
      mailRelay: false,
      webhooksAllowPrivate: false
    })
    expect(plain.split("\n")).toHaveLength(9)
    expect(plain).toContain("payer mail codes:                             logged here (no SMTP_URL set)")
    expect(plain).toContain("dashboard sign-in codes:                      logged here (no SMTP_URL set)")
    expect(plain).toContain(`the merchant dashboard (sign in by email):    ${base}/dashboard/`)
    expect(plain).toContain("restart with WEBHOOKS_ALLOW_PRIVATE=true")
    const configured = sandboxBanner({
      baseUrl: base,
      dashboardOrigin: "https://dash.example.com",
      mailRelay: true,
      webhooksAllowPrivate: true
    })
    expect(configured).toContain("sent through SMTP_URL")
    expect(configured).toContain("https://dash.example.com/dashboard/")
    expect(configured).not.toContain("no SMTP_URL set")
    expect(configured).toContain("allowed (WEBHOOKS_ALLOW_PRIVATE=true)")
    expect(configured).not.toContain("restart")
  })
})
