import { describe, expect, it } from "@effect/vitest"
import { walletAppLinks } from "../../../src/web/checkout/page/walletApps"

/** Issue 52 item 6 (decision 0098): the links into wallet apps' browsers, for a page served over HTTPS. */
describe("wallet app links", () => {
  it("carries the page's link in each app's documented form, a query and its characters intact", () => {
    const url = "https://pay.example.com/checkout/dr_01a2?lang=de&x=1"
    const links = Object.fromEntries(walletAppLinks(url).map((l) => [l.name, new URL(l.href)]))
    expect(Object.keys(links)).toEqual([
      "MetaMask",
      "Coinbase Wallet",
      "Trust Wallet",
      "OKX Wallet",
      "Phantom"
    ])
    // MetaMask takes the page as its path, without the scheme (its docs: link.metamask.io/dapp/app.uniswap.org).
    expect(links.MetaMask?.href).toBe(
      "https://link.metamask.io/dapp/pay.example.com/checkout/dr_01a2?lang=de&x=1"
    )
    expect(links["Coinbase Wallet"]?.searchParams.get("cb_url")).toBe(url)
    expect(links["Trust Wallet"]?.searchParams.get("url")).toBe(url)
    expect(links["Trust Wallet"]?.searchParams.get("coin_id")).toBe("60")
    const okx = new URL(links["OKX Wallet"]?.searchParams.get("deeplink") ?? "")
    expect(okx.protocol).toBe("okx:")
    expect(okx.searchParams.get("dappUrl")).toBe(url)
    expect(decodeURIComponent(links.Phantom?.pathname.slice("/ul/browse/".length) ?? "")).toBe(url)
    expect(links.Phantom?.searchParams.get("ref")).toBe("https://pay.example.com")
    for (const link of Object.values(links)) expect(link.protocol).toBe("https:")
  })
})
