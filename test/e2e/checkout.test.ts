import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { launchChromium, seriousViolationsInBothSchemes, waitForText } from "../support/Browser"
import { createWalletClient, type Hex, http, publicActions } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilChain, anvilDevAccount } from "../../infra/chain/Anvil"
import { type ChainService, startChainService } from "../support/ChainService"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { startSmtpInbox } from "../support/SmtpInbox"
import { ControlledClock } from "../support/ControlledClock"
import { merchantClient } from "../support/Api"
import { createMerchant } from "../support/Merchant"
import { startService } from "../support/Service"
import { Option } from "effect"
import QRCode from "qrcode"

/**
 * Issue 18: the hosted checkout in headless Chromium (Debian's, driven by playwright-core) against the whole
 * service on PostgreSQL and the local chain. The page's own wallet code talks to an injected EIP-1193 provider
 * (announced through EIP-6963) backed by a test key in the test process; it starts on the wrong chain.
 */
const artifacts = join(process.cwd(), "test", ".artifacts")

let local: LocalChain
let running: ChainService
let browser: Browser
let mining: ReturnType<typeof setInterval> | undefined
let smtp: Awaited<ReturnType<typeof startSmtpInbox>>

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  local = await startLocalChain()
  smtp = await startSmtpInbox()
  running = await startChainService(local, {
    mineWhileWaiting: true,
    config: { smtpUrl: Option.some(smtp.url) }
  })
  // Blocks keep coming, so `finalized` moves while a page waits.
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await smtp?.close()
  await local?.node.stop()
})

/** A page with a wallet: the test key answers the page's EIP-1193 requests; other origins are recorded. */
const openWallet = async (payerIndex: number) => {
  const account = anvilDevAccount(payerIndex)
  const chain = anvilChain({ chainId: 10143, rpcUrl: local.node.rpcUrl })
  const client = createWalletClient({ account, chain, transport: http(local.node.rpcUrl) }).extend(
    publicActions
  )
  let chainId = "0x1"
  const context: BrowserContext = await browser.newContext({
    bypassCSP: false,
    viewport: { width: 360, height: 780 }
  })
  const page: Page = await context.newPage()
  const foreign: Array<string> = []
  page.on("request", (r) => {
    if (!r.url().startsWith(running.service.baseUrl)) foreign.push(r.url())
  })
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(e.message))
  // Wallet behaviour a test can change: refuse the next signature (EIP-1193 4001), say the chain is unknown (4902;
  // this wallet cannot add networks: 4200).
  const quirks = { refuseNextSignature: false, unknownChain: false }
  const sent: Array<Hex> = []
  const answer = async (args: { method: string; params?: Array<unknown> }): Promise<unknown> => {
    switch (args.method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address]
      case "eth_chainId":
        return chainId
      case "wallet_switchEthereumChain":
        if (quirks.unknownChain) throw Object.assign(new Error("Unrecognized chain ID"), { code: 4902 })
        chainId = (args.params as Array<{ chainId: string }>)[0]?.chainId ?? chainId
        return null
      case "eth_signTypedData_v4": {
        if (quirks.refuseNextSignature) {
          quirks.refuseNextSignature = false
          throw Object.assign(new Error("User rejected the request."), { code: 4001 })
        }
        const typed = JSON.parse(args.params?.[1] as string)
        const { EIP712Domain: _, ...types } = typed.types
        return account.signTypedData({
          domain: typed.domain,
          types,
          primaryType: typed.primaryType,
          message: typed.message
        })
      }
      case "eth_sendTransaction": {
        const tx = args.params?.[0] as { to: Hex; data: Hex }
        const hash = await client.sendTransaction({ to: tx.to, data: tx.data })
        sent.push(hash)
        await client.waitForTransactionReceipt({ hash })
        return hash
      }
      default:
        throw Object.assign(new Error(`unsupported ${args.method}`), { code: 4200 })
    }
  }
  // Errors cross into the page as data, so the page sees EIP-1193 error codes as a real wallet gives them.
  await page.exposeBinding("__wallet", (_source, args: { method: string; params?: Array<unknown> }) =>
    answer(args).then(
      (result) => ({ result }),
      (e: { code?: number; message?: string }) => ({
        error: { code: e.code ?? -32603, message: e.message ?? "" }
      })
    )
  )
  // In the page: the provider forwards to the test's key, and announces itself the EIP-6963 way.
  await page.addInitScript(`
    const provider = {
      request: async (a) => {
        const r = await window.__wallet(a)
        if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code })
        return r.result
      }
    }
    window.addEventListener("eip6963:requestProvider", () =>
      window.dispatchEvent(new CustomEvent("eip6963:announceProvider", {
        detail: { info: { uuid: "test", name: "Test wallet", icon: "data:,", rdns: "test.wallet" }, provider }
      }))
    )`)
  return { page, context, account, foreign, errors, quirks, sent, chainIdNow: () => chainId }
}

const createRequest = async (amount: string, extra: Record<string, unknown> = {}) => {
  const refs = await running.api.setup()
  const made = await running.api.call<{ id: string; merchant_session_secret?: string; checkout_url: string }>(
    "POST",
    "/v1/deposit-requests",
    {
      amount,
      issuer_id: refs.issuerId,
      payout_address_id: refs.payoutAddressId,
      heading: "Order 1042",
      ...extra
    },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body
}

/** No serious or critical accessibility violations (axe-core, run in the page), in the light and dark schemes. */
const axe = async (page: Page, step: string) =>
  expect(await seriousViolationsInBothSchemes(page, step)).toEqual([])

describe("the hosted checkout", () => {
  it("takes a payer from the link to settled: wallet found, chain switched, statement signed, paid from the wallet", async () => {
    const returnUrl = "https://shop.example.com/orders/1042?paid=1"
    const request = await createRequest("4.250000", { return_url: returnUrl })
    expect(request.checkout_url).toBe(`${running.service.baseUrl}/checkout/${request.id}`)
    const { page, context, account, foreign, errors, sent, chainIdNow } = await openWallet(7)
    await local.mint(account.address, 4_250_000n)
    const started = Date.now()
    const res = await page.goto(request.checkout_url)
    expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'")
    await waitForText(page, "#amount", "equals", "4.25 USDC")
    const firstRenderMs = Date.now() - started
    expect(await page.textContent("#heading")).toBe("Order 1042")
    // Issue 35: no proof is asked of a payer on a request that needs none.
    expect(await page.textContent("#state")).toBe(
      "Choose the wallet you will pay from to get the payment address."
    )
    expect(await page.textContent("main")).not.toMatch(/prove who you are/i)
    // While it waits, the way back to the shop is there, quieter.
    expect(await page.textContent("#way-back-link")).toBe("Back to Acme Books")
    expect(await page.getAttribute("#way-back", "data-tone")).toBe("quiet")
    await axe(page, "wallet")
    await page.click("#connect-wallet")
    await page.waitForSelector("#pay:not([hidden])")
    expect(chainIdNow()).toBe("0x279f")
    const address = await page.textContent("#address")
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    // The network by name and the amount beside the address, as people read money.
    expect(await page.textContent("#pay-amount")).toBe("4.25 USDC")
    expect(await page.textContent("#network")).toBe("the sandbox test network (chain 10143)")
    expect(await page.textContent("#pay p")).toBe(
      "Send 4.25 USDC on the sandbox test network (chain 10143) to this address:"
    )
    expect(await page.$("#qr svg")).not.toBeNull()
    expect(await page.isEnabled("#pay-from-wallet")).toBe(true)
    expect(await page.textContent("#pay-reason")).toBe("")
    await axe(page, "pay")
    await page.screenshot({ path: join(artifacts, "checkout-pay.png"), fullPage: true })
    await page.click("#pay-from-wallet")
    // While the payment is on its way, no pay button can send it again, and each says why.
    expect(await page.isDisabled("#pay-from-wallet")).toBe(true)
    for (const button of await page.$$("#sandbox-pay button")) expect(await button.isDisabled()).toBe(true)
    // "…being sent from this page" until the wallet hands it over, then "…on its way" until the request shows it: on
    // a loaded machine both can be over before a poll from here sees them, so either reason, or the request no
    // longer taking payments, will do.
    await page.waitForFunction(
      `document.querySelector("#pay-reason")?.textContent?.startsWith("A payment is") === true ||
        document.body.dataset.open === "false"`,
      undefined,
      { timeout: 30_000 }
    )
    expect(await page.isDisabled("#pay-from-wallet")).toBe(true)
    expect(await page.getAttribute("#pay-from-wallet", "aria-describedby")).toBe("pay-reason wallet-funds")
    await page.screenshot({ path: join(artifacts, "checkout-on-its-way.png"), fullPage: true })
    await page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await page.textContent("#owed")).toBe("0.00 USDC")
    // The receipt: amount, time, network and the full hash of the transaction that paid it.
    await page.waitForSelector("#receipt:not([hidden])")
    expect(await page.textContent("#receipt-amount")).toBe("4.25 USDC")
    expect(await page.textContent("#receipt-issuer")).toBe("Acme Books")
    expect(await page.textContent("#receipt-network")).toBe("The sandbox test network (chain 10143)")
    expect(sent).toHaveLength(1)
    expect(await page.textContent("#receipt-tx")).toBe(sent[0])
    const paidAt = Date.parse((await page.getAttribute("#receipt-time", "datetime")) ?? "")
    expect(Math.abs(paidAt - Date.now())).toBeLessThan(120_000)
    expect(await page.textContent("#receipt-time")).not.toBe("")
    expect(await page.textContent("#receipt-contact")).toBe(
      "Questions about this payment? Ask Acme Books and quote this page's link."
    )
    expect(await page.textContent("#state")).toBe("Paid. Thank you. Your receipt is below.")
    // The merchant's return_url, as a plain link in the same tab.
    expect(await page.isVisible("#way-back-link")).toBe(true)
    expect(await page.textContent("#way-back-link")).toBe("Return to Acme Books")
    expect(await page.getAttribute("#way-back-link", "href")).toBe(returnUrl)
    expect(await page.getAttribute("#way-back-link", "rel")).toBe("noopener noreferrer")
    expect(await page.getAttribute("#way-back-link", "target")).toBeNull()
    expect(await page.getAttribute("#way-back", "data-tone")).toBe("")
    await axe(page, "settled")
    await page.screenshot({ path: join(artifacts, "checkout-settled.png"), fullPage: true })
    expect(foreign).toEqual([])
    expect(errors).toEqual([])
    const script = await (await fetch(`${running.service.baseUrl}/checkout/assets/app.js`)).text()
    const css = await (await fetch(`${running.service.baseUrl}/checkout/assets/app.css`)).text()
    const html = await (await fetch(request.checkout_url)).text()
    const gz = (s: string) => gzipSync(s).length
    console.log(
      `checkout page weight: JavaScript ${gz(script)} B gzipped (target < 150 KB), CSS ${gz(css)} B, HTML ${gz(html)} B; first render ${firstRenderMs} ms on loopback`
    )
    expect(gz(script)).toBeLessThan(150 * 1024)
    await context.close()
  }, 90_000)

  it("shows the payer what was returned after an overpayment, and takes the merchant-session secret from the fragment", async () => {
    const issuer = await running.api.call<{ id: string }>("POST", "/v1/issuers", {
      display_name: "Beacon Tools",
      support_email: "help@beacon.example",
      support_url: "https://beacon.example/support"
    })
    expect(issuer.status).toBe(201)
    const request = await createRequest("2.000000", {
      payer_policy_mode: "merchant_session",
      payer_reference: "u-9",
      issuer_id: issuer.body.id
    })
    const { page, context, account, errors } = await openWallet(8)
    // Before the secret is exchanged, the page asks for the merchant's site, not for a wallet or a proof of identity.
    await page.goto(request.checkout_url)
    await waitForText(page, "#state", "equals", "Open this page from the merchant's site to continue.")
    expect(await page.isVisible("#phone")).toBe(false)
    // A fresh load (a change of fragment alone would not load the page again).
    await page.goto("about:blank")
    await page.goto(`${request.checkout_url}#secret=${request.merchant_session_secret}`)
    // The secret is exchanged and dropped from the address bar; the wallet step comes next.
    await page.waitForSelector("#connect:not([hidden])")
    expect(new URL(page.url()).hash).toBe("")
    // The phone's link is the page's own, without the secret (the service keeps the proof).
    await page.waitForSelector("#phone:not([hidden])")
    expect(await page.textContent("#checkout-link")).toBe(request.checkout_url)
    await page.click("#connect-wallet")
    await page.waitForSelector("#pay:not([hidden])")
    const address = (await page.textContent("#address")) as Hex
    await local.mint(account.address, 3_500_000n)
    await local.pay(account, address, 3_500_000n)
    await page.waitForSelector("#returned:not([hidden])", { timeout: 30_000 })
    expect(await page.textContent("#returns")).toMatch(
      /^1\.50 USDC returned because you sent more than was asked\. Transaction: 0x[0-9a-f]{64}$/
    )
    // The receipt names the requested amount and the issuer's support email and page, as links.
    await page.waitForSelector("#receipt:not([hidden])", { timeout: 30_000 })
    expect(await page.textContent("#receipt-amount")).toBe("2.00 USDC")
    expect(await page.textContent("#receipt-tx")).toMatch(/^0x[0-9a-f]{64}$/)
    expect(await page.textContent("#receipt-contact")).toBe(
      "Questions about this payment? Contact Beacon Tools: help@beacon.example or https://beacon.example/support."
    )
    expect(await page.$$eval("#receipt-contact a", (as) => as.map((a) => a.getAttribute("href")))).toEqual([
      "mailto:help@beacon.example",
      "https://beacon.example/support"
    ])
    await axe(page, "returned")
    await page.screenshot({ path: join(artifacts, "checkout-returned.png"), fullPage: true })
    expect(errors).toEqual([])
    await context.close()
  }, 90_000)

  it("turns a refusal into a sentence: a wrong session secret", async () => {
    const request = await createRequest("1.000000", {
      payer_policy_mode: "merchant_session",
      payer_reference: "u-10"
    })
    const { page, context } = await openWallet(9)
    await page.goto(`${request.checkout_url}#secret=mss_wrong`)
    await waitForText(page, "#status", "error")
    expect(await page.textContent("#status")).not.toMatch(/identity_unauthorized|invalid_request/)
    expect(await page.isVisible("#session")).toBe(true)
    await context.close()
  }, 60_000)

  it("proves a mailbox with the emailed code, after a wrong one explained in plain words", async () => {
    const email = `payer-${randomUUID().slice(0, 8)}@example.com`
    const request = await createRequest("1.000000", { payer_policy_mode: "mailbox", expected_email: email })
    const { page, context, errors } = await openWallet(10)
    await page.goto(request.checkout_url)
    await page.waitForSelector("#mailbox:not([hidden])")
    expect(await page.textContent("#state")).toBe(
      "Confirm your email address, then choose the wallet you will pay from."
    )
    await axe(page, "mailbox")
    await page.click("#send-code")
    await waitForText(page, "#status", "startsWith", "We sent a code to")
    await page.fill("#code", "000000")
    await page.click("#code-form button[type=submit]")
    await waitForText(page, "#status", "error")
    expect(await page.textContent("#status")).toMatch(/not right|expired/)
    const code = await waitForCode(email)
    await page.fill("#code", code)
    await page.click("#code-form button[type=submit]")
    await page.waitForSelector("#connect:not([hidden])")
    expect(await page.isVisible("#mailbox")).toBe(false)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("explains a declined signature and an unknown network, then succeeds on retry", async () => {
    const request = await createRequest("1.000000")
    const { page, context, quirks } = await openWallet(11)
    await page.goto(request.checkout_url)
    await page.waitForSelector("#connect:not([hidden])")
    quirks.unknownChain = true
    await page.click("#connect-wallet")
    await waitForText(page, "#status", "includes", "does not know this network")
    quirks.unknownChain = false
    quirks.refuseNextSignature = true
    await page.click("#connect-wallet")
    await waitForText(page, "#status", "startsWith", "You declined")
    await page.click("#connect-wallet")
    await page.waitForSelector("#pay:not([hidden])")
    await context.close()
  }, 60_000)

  it("follows changes by long polling: commit → page updated, p50 and p99 over 40 changes", async () => {
    const request = await createRequest("1.000000")
    const { page, context } = await openWallet(12)
    await page.goto(request.checkout_url)
    await waitForText(page, "#heading", "equals", "Order 1042")
    const samples: Array<number> = []
    for (let i = 0; i < 40; i++) {
      const heading = `Order 1042 / change ${i}`
      const patched = await running.api.call("PATCH", `/v1/deposit-requests/${request.id}`, { heading })
      expect(patched.status).toBe(200)
      const committed = performance.now()
      await waitForText(page, "#heading", "equals", heading)
      samples.push(performance.now() - committed)
    }
    samples.sort((a, b) => a - b)
    const p = (q: number) =>
      samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)]!.toFixed(1)
    console.log(
      `checkout: commit → page updated over ${samples.length} changes: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms (target p99 < 500 ms)`
    )
    expect(samples[samples.length - 1]).toBeLessThan(2_000)
    await context.close()
  }, 90_000)

  it("runs every money path in the sandbox without a wallet extension: test wallet, faucet, part then the rest", async () => {
    const request = await createRequest("3.000000")
    const context = await browser.newContext({ viewport: { width: 360, height: 780 } })
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("pageerror", (e) => errors.push(e.message))
    await page.goto(request.checkout_url)
    await page.waitForSelector("#sandbox:not([hidden])")
    await page.click("#test-wallet")
    await page.waitForSelector("#sandbox-pay:not([hidden])")
    // The test wallet lives in the page, not in a wallet of this browser: the button says why it is greyed.
    expect(await page.isDisabled("#pay-from-wallet")).toBe(true)
    expect(await page.textContent("#pay-reason")).toBe(
      "No wallet is connected in this browser. Send 3.00 USDC to the address above from the wallet you chose."
    )
    await page.click("#fund")
    await waitForText(page, "#status", "startsWith", "The test wallet got 100.00")
    await axe(page, "sandbox")
    await page.click('#sandbox-pay button[data-mode="partial"]')
    // Paying twice is not one click away: every pay button waits, with the reason beside them.
    for (const button of await page.$$("#sandbox-pay button")) expect(await button.isDisabled()).toBe(true)
    // The reason shows until the request shows the payment; on a loaded machine that can be over before a poll
    // from here sees it, so the arrival itself will do.
    await page.waitForFunction(
      `document.querySelector("#sandbox-reason")?.textContent?.startsWith("A payment is on its way") === true ||
        document.body.dataset.status === "partially_deposited"`,
      undefined,
      { timeout: 30_000 }
    )
    await page.waitForSelector('body[data-status="partially_deposited"]', { timeout: 30_000 })
    await waitForText(page, "#owed", "equals", "1.50 USDC")
    // It arrived: the buttons come back for the rest.
    expect(await page.isEnabled('#sandbox-pay button[data-mode="exact"]')).toBe(true)
    expect(await page.textContent("#sandbox-reason")).toBe("")
    expect(await page.textContent("#pay-amount")).toBe("1.50 USDC")
    await page.click('#sandbox-pay button[data-mode="exact"]')
    await page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await page.textContent("#received")).toBe("3.00 USDC")
    // Two transfers paid it: the receipt lists both, in full.
    await page.waitForSelector("#receipt:not([hidden])")
    expect(await page.textContent("#receipt-tx-title")).toBe("Transactions")
    expect(
      await page.$$eval("#receipt-tx li", (items) =>
        items.map((i) => /^0x[0-9a-f]{64}$/.test(i.textContent ?? ""))
      )
    ).toEqual([true, true])
    expect(await page.isVisible("#sandbox")).toBe(false)
    await page.screenshot({ path: join(artifacts, "checkout-sandbox-settled.png"), fullPage: true })
    expect(errors).toEqual([])
    await context.close()
  }, 90_000)

  it("offers a phone the page's own link as a QR code and as text, and names the network in the wallet step", async () => {
    const request = await createRequest("1234.500001")
    const { page, context, foreign, errors } = await openWallet(13)
    await page.goto(request.checkout_url)
    await waitForText(page, "#amount", "equals", "1,234.500001 USDC")
    await page.waitForSelector("#phone:not([hidden])")
    expect(await page.textContent("#checkout-link")).toBe(request.checkout_url)
    // The QR encodes exactly the link: the modules drawn are the ones the library draws for it here.
    await page.waitForSelector("#phone-qr svg")
    const modules = (svg: string) => [...svg.matchAll(/\sd="([^"]+)"/g)].map((m) => m[1])
    const expected = await QRCode.toString(request.checkout_url, {
      type: "svg",
      margin: 1,
      errorCorrectionLevel: "M"
    })
    expect(modules(await page.innerHTML("#phone-qr"))).toEqual(modules(expected))
    expect(modules(expected).length).toBeGreaterThan(0)
    await axe(page, "phone")
    await page.screenshot({ path: join(artifacts, "checkout-phone.png"), fullPage: true })
    // Once the wallet is attested the address is on the page and the phone's part is done.
    await page.click("#connect-wallet")
    await page.waitForSelector("#pay:not([hidden])")
    expect(await page.isVisible("#phone")).toBe(false)
    expect(await page.textContent("#pay-amount")).toBe("1,234.500001 USDC")
    expect(foreign).toEqual([])
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("shows an unknown request as not found, never amounts stuck at “…”", async () => {
    const { page, context, foreign, errors } = await openWallet(14)
    for (const [path, status] of [
      [`/checkout/dr_${randomUUID()}`, 200],
      ["/checkout/not-a-request", 404]
    ] as const) {
      const res = await page.goto(`${running.service.baseUrl}${path}`)
      expect(res?.status()).toBe(status)
      expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'")
      await page.waitForSelector('body[data-status="not_found"]')
      expect(await page.textContent("#heading")).toBe("Payment request not found")
      expect(await page.textContent("#state")).toMatch(/^There is no payment request at this link/)
      expect(await page.isVisible("#summary")).toBe(false)
      expect(await page.textContent("main")).not.toContain("…")
      for (const step of ["#connect", "#pay", "#phone", "#receipt", "#sandbox"])
        expect(await page.isVisible(step)).toBe(false)
      await axe(page, `not found ${status}`)
    }
    await page.screenshot({ path: join(artifacts, "checkout-not-found.png"), fullPage: true })
    expect(foreign).toEqual([])
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("serves its favicon from its own origin, and Chromium draws it 32 × 32", async () => {
    const request = await createRequest("1.000000")
    const { page, context, foreign } = await openWallet(15)
    const icons: Array<{ url: string; status: number }> = []
    page.on("response", (r) => {
      if (r.url().endsWith("/favicon.ico")) icons.push({ url: r.url(), status: r.status() })
    })
    await page.goto(request.checkout_url)
    await waitForText(page, "#amount", "equals", "1.00 USDC")
    expect(await page.getAttribute('link[rel="icon"]', "href")).toBe("/favicon.ico")
    const res = await page.goto(`${running.service.baseUrl}/favicon.ico`)
    expect(res?.status()).toBe(200)
    expect(res?.headers()["content-type"]).toBe("image/x-icon")
    await page.waitForSelector("img")
    expect(await page.$eval("img", (img) => [img.naturalWidth, img.naturalHeight])).toEqual([32, 32])
    expect(icons.every((i) => i.url === `${running.service.baseUrl}/favicon.ico` && i.status === 200)).toBe(
      true
    )
    expect(foreign).toEqual([])
    await context.close()
  }, 60_000)

  it("shows an expired request as expired, with nothing left to do", async () => {
    // A service of its own on a clock the test moves: requests live at least 5 minutes.
    const clock = new ControlledClock()
    const service = await startService({ clock, config: { rateLimitCapacity: 10_000 } })
    const api = merchantClient(service, await createMerchant(service.databaseUrl))
    const context = await browser.newContext({ viewport: { width: 360, height: 780 } })
    try {
      const refs = await api.setup()
      const made = await api.call<{ id: string; checkout_url: string }>(
        "POST",
        "/v1/deposit-requests",
        {
          amount: "1.000000",
          issuer_id: refs.issuerId,
          payout_address_id: refs.payoutAddressId,
          return_url: "http://localhost:3000/cart"
        },
        { "idempotency-key": randomUUID() }
      )
      const page = await context.newPage()
      await page.goto(made.body.checkout_url)
      await page.waitForSelector("#connect:not([hidden])")
      clock.advance(25 * 60 * 60 * 1000)
      await page.waitForSelector('body[data-status="expired"]', { timeout: 30_000 })
      expect(await page.textContent("#state")).toBe("This payment request has expired.")
      await waitForText(page, "#deadline", "equals", "—")
      for (const step of ["#connect", "#pay", "#mailbox", "#sandbox"])
        expect(await page.isVisible(step)).toBe(false)
      await waitForText(page, "#way-back-link", "startsWith", "Return to ")
      expect(await page.getAttribute("#way-back-link", "href")).toBe("http://localhost:3000/cart")
      await axe(page, "expired")
      await page.screenshot({ path: join(artifacts, "checkout-expired.png"), fullPage: true })
    } finally {
      await context.close()
      await service.stop()
    }
  }, 60_000)
})

/** The newest code mailed to `email` (the local SMTP server's inbox). */
const waitForCode = async (email: string) => {
  for (let i = 0; i < 100; i++) {
    const codes = smtp.inbox
      .filter((m) => m.to === email)
      .map((m) => m.raw.match(/one-time code is (\d{6})/)?.[1])
    const last = codes[codes.length - 1]
    if (last !== undefined) return last
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`no code mailed to ${email}`)
}
