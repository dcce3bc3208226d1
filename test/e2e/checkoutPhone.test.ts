import { randomUUID } from "node:crypto"
import type { Browser, Page } from "playwright-core"
import QRCode from "qrcode"
import type { Address } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { messages } from "../../src/web/checkout/page/messages"
import { launchChromium, seriousViolationsInBothSchemes, waitForText } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { openWalletPage, prompts, type TestWallet, testWallet } from "../support/InjectedWallet"
import { type LocalChain, startLocalChain } from "../support/LocalChain"

/**
 * Issue 52 items 6 and 7 (decision 0098): a phone with no wallet in its browser is offered links into wallet apps'
 * own browsers, a computer with none the QR of this page for a phone, and neither is promised an address; focus
 * follows the payer to each step's heading; an error is cleared once the request is paid. Headless Chromium
 * against the whole service and the local chain, with the injected EIP-6963 wallet of the other checkout tests.
 */
const PHONE = { isMobile: true, hasTouch: true, viewport: { width: 390, height: 844 } }

let local: LocalChain
let running: ChainService
let browser: Browser
let mining: ReturnType<typeof setInterval> | undefined

beforeAll(async () => {
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await local?.node.stop()
})

const payer = async (usdc: bigint) => {
  const account = privateKeyToAccount(generatePrivateKey())
  await local.chain.setBalance({ address: account.address, value: 10n ** 18n })
  if (usdc > 0n) await local.mint(account.address, usdc)
  return account
}

const openPage = (wallets: Array<TestWallet>, context = {}) =>
  openWalletPage(browser, local.node, running.service.baseUrl, wallets, context)

const createRequest = async (amount: string) => {
  const refs = await running.api.setup()
  const made = await running.api.call<{ id: string; checkout_url: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, heading: "Order 98" },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body
}

const axe = async (page: Page, step: string) =>
  expect(await seriousViolationsInBothSchemes(page, step)).toEqual([])

/** The id of the element that has focus now. */
const focused = (page: Page) => page.evaluate("document.activeElement?.id ?? null") as Promise<string | null>

/** Waits until focus is on the element with this id (focus moves after a render the test does not see). */
const waitForFocus = async (page: Page, id: string, timeout = 30_000) => {
  const until = Date.now() + timeout
  let last: string | null = null
  while (Date.now() < until) {
    last = await focused(page)
    if (last === id) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`focus never reached #${id} (last: #${last})`)
}

/** What no page may say without a wallet: an address paid "by hand" that never appears there. */
const PROMISE = /by hand|once it is shown/i

describe("the payer on a phone, and where focus goes", () => {
  it("offers a phone without a wallet links into wallet apps for this very page, and promises no address", async () => {
    const request = await createRequest("3.000000")
    const url = request.checkout_url
    const p = await openPage([], PHONE)
    await p.page.goto(url)
    await p.page.waitForSelector("#apps:not([hidden])")
    expect(await p.page.evaluate('matchMedia("(pointer: coarse)").matches')).toBe(true)
    const links = await p.page.$$eval("#app-links a", (as) =>
      as.map((a) => ({ name: a.textContent, href: a.getAttribute("href"), rel: a.getAttribute("rel") }))
    )
    // Each in its app's documented format, carrying exactly this page's link.
    const encoded = encodeURIComponent(url)
    expect(links).toEqual(
      [
        { name: "MetaMask", href: `https://link.metamask.io/dapp/${url.replace(/^https:\/\//, "")}` },
        { name: "Coinbase Wallet", href: `https://go.cb-w.com/dapp?cb_url=${encoded}` },
        { name: "Trust Wallet", href: `https://link.trustwallet.com/open_url?coin_id=60&url=${encoded}` },
        {
          name: "OKX Wallet",
          href: `https://web3.okx.com/download?deeplink=${encodeURIComponent(`okx://wallet/dapp/url?dappUrl=${encoded}`)}`
        },
        {
          name: "Phantom",
          href: `https://phantom.app/ul/browse/${encoded}?ref=${encodeURIComponent(new URL(url).origin)}`
        }
      ].map((l) => ({ ...l, rel: "noopener noreferrer" }))
    )
    expect(new URL(links[1]!.href!).searchParams.get("cb_url")).toBe(url)
    expect(new URL(links[2]!.href!).searchParams.get("url")).toBe(url)
    expect(await p.page.textContent("#app-link")).toBe(url)
    // The computer's hand-off is not offered on the phone itself.
    expect(await p.page.isVisible("#phone")).toBe(false)
    await axe(p.page, "phone without a wallet")
    // The links take the connect button's place: it could only say that no wallet is here.
    expect(await p.page.isVisible("#connect")).toBe(false)
    expect(await p.page.textContent("#status")).toBe("")
    // A page just opened starts at its top, even though the links came after the first render.
    expect(await focused(p.page)).toBe("")
    expect(await p.page.isVisible("#pay")).toBe(false)
    expect(await p.page.textContent("main")).not.toMatch(PROMISE)
    await p.page.screenshot({ path: "test/.artifacts/checkout-phone-no-wallet.png", fullPage: true })

    // Followed into a wallet app's browser: the link it carries is the page, and a wallet there pays it.
    const account = await payer(3_000_000n)
    const wallet = testWallet("com.example.app", "App wallet", account)
    const inApp = await openPage([wallet], PHONE)
    await inApp.page.goto(new URL(links[1]!.href!).searchParams.get("cb_url")!)
    await inApp.page.waitForSelector("#connect:not([hidden])")
    expect(await inApp.page.isVisible("#apps")).toBe(false)
    await inApp.click("#connect-wallet")
    await waitForText(inApp.page, "#status", "equals", "Your payment address is ready.")
    await inApp.click("#pay-from-wallet")
    await inApp.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(prompts(wallet)).toEqual(["eth_requestAccounts", "eth_signTypedData_v4", "eth_sendTransaction"])
    // The page the phone still has open follows to the receipt too.
    await p.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await p.page.isVisible("#apps")).toBe(false)
    expect(p.foreign).toEqual([])
    expect(inApp.foreign).toEqual([])
    expect([...p.errors, ...inApp.errors]).toEqual([])
    await p.context.close()
    await inApp.context.close()
  }, 90_000)

  it("says the phone's way in in the payer's language, from the one catalogue", async () => {
    const request = await createRequest("1.000000")
    const p = await openPage([], { ...PHONE, locale: "de-DE" })
    await p.page.goto(request.checkout_url)
    await p.page.waitForSelector("#apps:not([hidden])")
    await waitForText(p.page, "#apps-title", "equals", messages.de["apps.title"])
    const texts = await p.page.$$eval("#apps p:not(.address)", (ps) => ps.map((x) => x.textContent))
    expect(texts).toEqual([messages.de["apps.intro"], messages.de["apps.other"]])
    expect(await p.page.textContent("#copy-app-link")).toBe(messages.de["phone.copy"])
    await axe(p.page, "phone without a wallet, de")
    expect(p.errors).toEqual([])
    await p.context.close()
  }, 60_000)

  it("offers a computer without a wallet the QR of this page for a phone, and promises no address", async () => {
    const request = await createRequest("1.000000")
    const p = await openPage([], { viewport: { width: 1024, height: 800 } })
    await p.page.goto(request.checkout_url)
    await p.page.waitForSelector("#phone-qr svg")
    expect(await p.page.isVisible("#apps")).toBe(false)
    const modules = (svg: string) => [...svg.matchAll(/\sd="([^"]+)"/g)].map((m) => m[1])
    const expected = await QRCode.toString(request.checkout_url, {
      type: "svg",
      margin: 1,
      errorCorrectionLevel: "M"
    })
    expect(modules(await p.page.innerHTML("#phone-qr"))).toEqual(modules(expected))
    await p.click("#connect-wallet")
    await waitForText(p.page, "#status", "equals", messages.en["wallet.none"])
    expect(await focused(p.page)).toBe("status")
    expect(await p.page.textContent("main")).not.toMatch(PROMISE)
    for (const language of Object.values(messages))
      expect([language["wallet.none"], language["wallet.nonePhone"]].join(" ")).not.toMatch(PROMISE)
    await axe(p.page, "computer without a wallet")
    expect(p.errors).toEqual([])
    await p.context.close()
  }, 60_000)

  it("moves focus to each step's heading: pay, an error, waiting, the receipt", async () => {
    const request = await createRequest("2.000000")
    const account = await payer(2_000_000n)
    const wallet = testWallet("com.example.alpha", "Alpha wallet", account)
    const p = await openPage([wallet])
    await p.page.goto(request.checkout_url)
    await p.page.waitForSelector("#connect:not([hidden])")
    // A page just opened starts at its top.
    expect(await focused(p.page)).toBe("")
    await p.click("#connect-wallet")
    await waitForFocus(p.page, "pay-title")
    expect(await p.page.isVisible("#connect")).toBe(false)
    await axe(p.page, "pay")
    wallet.refuse = { code: 4001, message: "User rejected the request." }
    await p.click("#pay-from-wallet")
    await waitForText(
      p.page,
      "#status",
      "equals",
      "You declined in your wallet. Try again when you are ready."
    )
    await waitForFocus(p.page, "status")
    await p.page.waitForSelector("#pay-from-wallet:enabled")
    await p.click("#pay-from-wallet")
    await waitForFocus(p.page, "waiting-title")
    expect(await p.page.isVisible("#waiting")).toBe(true)
    await axe(p.page, "waiting")
    await waitForFocus(p.page, "receipt-title")
    expect(await p.page.isVisible("#waiting")).toBe(false)
    await axe(p.page, "receipt")
    expect(p.errors).toEqual([])
    await p.context.close()
  }, 90_000)

  it("clears an error once the request is paid, even when it was paid from elsewhere", async () => {
    const request = await createRequest("1.500000")
    const account = await payer(1_500_000n)
    const wallet = testWallet("com.example.alpha", "Alpha wallet", account)
    const p = await openPage([wallet])
    await p.page.goto(request.checkout_url)
    await p.page.waitForSelector("#connect:not([hidden])")
    await p.click("#connect-wallet")
    await waitForText(p.page, "#status", "equals", "Your payment address is ready.")
    wallet.refuse = { code: -32603, message: "execution reverted: 0x08c379a0" }
    await p.click("#pay-from-wallet")
    await waitForText(p.page, "#status", "equals", "Your wallet could not do that. Try again.")
    expect(await p.page.getAttribute("#status", "data-tone")).toBe("error")
    // Paid by hand from the same wallet, outside the page: the request shows it, the error goes.
    const address = (await p.page.textContent("#address")) as Address
    await local.pay(account, address, 1_500_000n)
    await p.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await p.page.textContent("#status")).toBe("")
    expect(await p.page.getAttribute("#status", "data-tone")).toBe("info")
    expect(await p.page.textContent("#state")).toBe("Paid. Thank you. Your receipt is below.")
    await axe(p.page, "paid after an error")
    expect(p.errors).toEqual([])
    await p.context.close()
  }, 90_000)
})
