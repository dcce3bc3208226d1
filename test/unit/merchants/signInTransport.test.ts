import { describe, expect, it } from "@effect/vitest"
import { isLoopback, signInTransport } from "../../../services/merchants/SignInAttempts"

// The HTTPS rule of the sign-in routes, as a decision over what the socket and a trusted proxy say.

const production = {
  environment: "production" as const,
  encrypted: false,
  forwardedProto: undefined,
  forwardedFor: undefined
}

describe("the sign-in HTTPS rule", () => {
  it("knows loopback in every spelling, and nothing else", () => {
    for (const a of ["127.0.0.1", "127.0.0.2", "127.255.0.9", "::1", "::ffff:127.0.0.1"])
      expect(isLoopback(a)).toBe(true)
    for (const a of [
      "10.0.0.1",
      "192.168.1.5",
      "::ffff:10.0.0.1",
      "fe80::1",
      "128.0.0.1",
      "unknown",
      "1127.0.0.1"
    ])
      expect(isLoopback(a)).toBe(false)
  })

  it("refuses plain HTTP from another host in production, whatever its headers claim", () => {
    expect(signInTransport({ ...production, peer: "10.1.2.3" })).toEqual({
      allowed: false,
      client: "10.1.2.3"
    })
    // A stranger's X-Forwarded-* are not believed: neither the scheme nor the client address.
    expect(
      signInTransport({ ...production, peer: "10.1.2.3", forwardedProto: "https", forwardedFor: "127.0.0.1" })
    ).toEqual({ allowed: false, client: "10.1.2.3" })
  })

  it("allows loopback itself, TLS, and a loopback proxy that says https", () => {
    expect(signInTransport({ ...production, peer: "127.0.0.1" }).allowed).toBe(true)
    expect(signInTransport({ ...production, peer: "::1" }).allowed).toBe(true)
    expect(signInTransport({ ...production, peer: "10.1.2.3", encrypted: true }).allowed).toBe(true)
    expect(
      signInTransport({
        ...production,
        peer: "127.0.0.1",
        forwardedProto: "https",
        forwardedFor: "203.0.113.7"
      })
    ).toEqual({ allowed: true, client: "203.0.113.7" })
  })

  it("refuses what a loopback proxy says arrived over plain HTTP", () => {
    expect(
      signInTransport({
        ...production,
        peer: "127.0.0.1",
        forwardedProto: "http",
        forwardedFor: "203.0.113.7"
      })
    ).toEqual({ allowed: false, client: "203.0.113.7" })
  })

  it("counts a proxied client by the proxy's own (last) hop, not the one the client wrote", () => {
    expect(
      signInTransport({
        ...production,
        peer: "127.0.0.1",
        forwardedProto: "https",
        forwardedFor: "1.1.1.1, 203.0.113.7"
      }).client
    ).toBe("203.0.113.7")
  })

  it("allows plain HTTP from anywhere in the sandbox", () => {
    expect(signInTransport({ ...production, environment: "sandbox", peer: "10.1.2.3" })).toEqual({
      allowed: true,
      client: "10.1.2.3"
    })
  })
})
