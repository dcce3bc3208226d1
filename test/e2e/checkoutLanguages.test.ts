import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formatMoneyIn } from "../../src/web/checkout/page/amounts"
import { LANGUAGES, type Language, type MessageId, messages } from "../../src/web/checkout/page/messages"
import { launchChromium, seriousViolationsInBothSchemes, waitForText } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { type LocalChain, startLocalChain } from "../support/LocalChain"

/**
 * Issue 48 item 8: the hosted checkout in the payer's language. Each language is opened in a Chromium whose locale
 * is that language's and whose zone is Los Angeles: the page, its money and its times follow, nothing is left in
 * English, and a screenshot of each is kept. The picker switches in place and is remembered.
 */
const artifacts = join(process.cwd(), "test", ".artifacts")
const ZONE = "America/Los_Angeles"

/** The browser locale each language is tried with. */
const LOCALES: Record<Language, string> = {
  en: "en-US",
  es: "es-ES",
  "pt-BR": "pt-BR",
  fr: "fr-FR",
  de: "de-DE",
  tr: "tr-TR",
  ja: "ja-JP",
  "zh-CN": "zh-CN"
}

let local: LocalChain
let running: ChainService
let browser: Browser
let mining: ReturnType<typeof setInterval> | undefined
let open: { id: string; checkout_url: string }
let paid: { id: string; checkout_url: string }

const createRequest = async (amount: string) => {
  const refs = await running.api.setup()
  const made = await running.api.call<{ id: string; checkout_url: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, heading: "Order 1042" },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body
}

const contextFor = (
  locale: string,
  extra: Parameters<Browser["newContext"]>[0] = {}
): Promise<BrowserContext> =>
  browser.newContext({ locale, timezoneId: ZONE, viewport: { width: 360, height: 780 }, ...extra })

/** The text a payer can see: visible text nodes and accessible names, without the picker's language names. */
const visibleText = (page: Page): Promise<Array<string>> =>
  page.evaluate(`(() => {
    const seen = []
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const parent = node.parentElement
      if (parent === null || parent.closest("#language") !== null) continue
      if (!parent.checkVisibility({ checkVisibilityCSS: true })) continue
      const text = (node.textContent ?? "").trim()
      if (text !== "") seen.push(text)
    }
    for (const labelled of document.querySelectorAll("[aria-label]"))
      if (labelled.checkVisibility({ checkVisibilityCSS: true })) seen.push(labelled.getAttribute("aria-label") ?? "")
    seen.push(document.title)
    return seen
  })()`)

/**
 * English words on a page in another language: every piece of an English message (split at its placeholders)
 * found as whole words in what the payer sees, for each message this language words differently.
 */
const englishLeftIn = (texts: ReadonlyArray<string>, language: Language): Array<string> => {
  const seen = texts.join("\n")
  const found: Array<string> = []
  for (const id of Object.keys(messages.en) as Array<MessageId>) {
    if (messages[language][id] === messages.en[id]) continue
    for (const piece of messages.en[id].split(/\{\w+\}/)) {
      const words = piece.trim().replace(/^[\s.,:;()…]+|[\s.,:;()…]+$/g, "")
      if (!/\p{L}{2}/u.test(words)) continue
      const escaped = words.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      if (new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, "u").test(seen))
        found.push(`${id}: ${words}`)
    }
  }
  return found
}

/** No serious or critical accessibility violations (axe-core, run in the page), in the light and dark schemes. */
const axe = async (page: Page, step: string) =>
  expect(await seriousViolationsInBothSchemes(page, step)).toEqual([])

/** Hours and minutes of a moment in Los Angeles, as 24-hour and 12-hour clocks write them. */
const losAngelesClock = (iso: string) => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: ZONE,
    hour: "numeric",
    minute: "2-digit",
    hourCycle: "h23"
  }).formatToParts(new Date(iso))
  const hour = Number(parts.find((p) => p.type === "hour")?.value)
  const minute = parts.find((p) => p.type === "minute")?.value ?? ""
  return { h24: `${hour}:${minute}`, h12: `${hour % 12 === 0 ? 12 : hour % 12}:${minute}` }
}

/** Waits until the text of `selector` matches (read from the test process: the page's CSP forbids string eval). */
const waitForMatch = async (page: Page, selector: string, pattern: RegExp, timeout = 10_000) => {
  const until = Date.now() + timeout
  let got = ""
  while (Date.now() < until) {
    got = (await page.textContent(selector)) ?? ""
    if (pattern.test(got)) return got
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`${selector} never matched ${pattern} (last: ${JSON.stringify(got)})`)
}

/** A zone named after a time: Los Angeles in November is eight hours behind UTC. */
const ZONE_SHOWN = /PST|(GMT|UTC)[-−]8(?!\d)|GMT[-−]08:00/

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  browser = await launchChromium()
  open = await createRequest("1234.500000")
  // One request paid through the sandbox's test wallet, for the receipt in every language.
  paid = await createRequest("4.250000")
  const context = await contextFor("en-US")
  const page = await context.newPage()
  await page.goto(paid.checkout_url)
  await page.waitForSelector("#test-wallet:not([hidden])")
  await page.click("#test-wallet")
  await page.waitForSelector("#sandbox-pay:not([hidden])")
  await page.click('#sandbox-pay button[data-mode="exact"]')
  await page.waitForSelector("#receipt:not([hidden])", { timeout: 30_000 })
  await context.close()
}, 120_000)
afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await local?.node.stop()
})

describe("the checkout in the payer's language", () => {
  for (const { tag } of LANGUAGES) {
    const locale = LOCALES[tag]
    it(`${tag}: chosen from a ${locale} browser, money and times in its way, no English left`, async () => {
      const words = messages[tag]
      const context = await contextFor(locale)
      const page = await context.newPage()
      const errors: Array<string> = []
      page.on("pageerror", (e) => errors.push(e.message))

      await page.goto(open.checkout_url)
      await waitForText(page, "#amount", "equals", `${formatMoneyIn(locale, 1_234_500_000n)} USDC`)
      expect(await page.getAttribute("html", "lang")).toBe(tag)
      expect(await page.title()).toBe(words["page.title"])
      expect(await page.textContent("#connect-title")).toBe(words["connect.title"])
      expect(await page.textContent("#state")).toBe(words["state.awaitingWallet"])
      expect(await page.textContent("#sandbox-badge")).toBe(words["sandbox.badge"])
      expect(await page.inputValue("#language")).toBe(tag)
      // The sandbox badge is the first thing on the page.
      const badge = await page.locator("#sandbox-badge").boundingBox()
      const issuer = await page.locator("#heading").boundingBox()
      expect(badge !== null && issuer !== null && badge.y < issuer.y).toBe(true)
      // A desktop browser is offered the phone; the deadline names its zone.
      await page.waitForSelector("#phone:not([hidden])")
      await waitForMatch(page, "#deadline", ZONE_SHOWN)
      const untranslatedOpen = englishLeftIn(await visibleText(page), tag)
      await page.screenshot({ path: join(artifacts, `checkout-${tag}-open.png`), fullPage: true })

      await page.goto(paid.checkout_url)
      await page.waitForSelector("#receipt:not([hidden])")
      await waitForText(page, "#receipt-amount", "equals", `${formatMoneyIn(locale, 4_250_000n)} USDC`)
      expect(await page.textContent("#state")).toBe(words["state.settled"])
      expect(await page.textContent("#receipt-title")).toBe(words["receipt.title"])
      // The receipt's time in the browser's zone, with the zone named.
      const paidAt = (await page.getAttribute("#receipt-time", "datetime")) ?? ""
      const shown = (await page.textContent("#receipt-time")) ?? ""
      expect(shown).toMatch(ZONE_SHOWN)
      const clock = losAngelesClock(paidAt)
      expect(shown.includes(clock.h24) || shown.includes(clock.h12), `${shown} at ${paidAt}`).toBe(true)
      expect(await page.getAttribute("#receipt-time", "title")).toBe(ZONE)
      const untranslatedPaid = englishLeftIn(await visibleText(page), tag)
      await page.screenshot({ path: join(artifacts, `checkout-${tag}-receipt.png`), fullPage: true })

      if (tag !== "en") {
        expect(untranslatedOpen).toEqual([])
        expect(untranslatedPaid).toEqual([])
      } else {
        // The check itself sees English where it is: the English page, checked as if it were German.
        expect(englishLeftIn(await visibleText(page), "de").length).toBeGreaterThan(10)
      }
      expect(errors).toEqual([])
      await context.close()
    }, 60_000)
  }

  it("switches language from the picker without a reload, keeps it for the next visit, and stays accessible", async () => {
    const context = await contextFor("de-DE")
    const page = await context.newPage()
    const navigations: Array<string> = []
    page.on("framenavigated", (frame) => navigations.push(frame.url()))
    await page.goto(open.checkout_url)
    await waitForText(page, "#state", "equals", messages.de["state.awaitingWallet"])
    expect(await page.textContent("#amount")).toBe("1.234,50 USDC")
    await axe(page, "de")
    const loadedAt = await page.evaluate("performance.timeOrigin")
    navigations.length = 0

    await page.selectOption("#language", "ja")
    await waitForText(page, "#state", "equals", messages.ja["state.awaitingWallet"])
    expect(await page.getAttribute("html", "lang")).toBe("ja")
    expect(await page.textContent("#connect-wallet")).toBe(messages.ja["connect.button"])
    expect(await page.textContent("#summary dt")).toBe(messages.ja["summary.amount"])
    expect(await page.getAttribute("#phone-qr", "aria-label")).toBe(messages.ja["phone.qrLabel"])
    // Japanese words, and numbers as Japanese writes them (the browser offers no Japanese tag: the catalogue's).
    expect(await page.textContent("#amount")).toBe(`${formatMoneyIn("ja", 1_234_500_000n)} USDC`)
    expect(await page.evaluate("performance.timeOrigin")).toBe(loadedAt)
    expect(navigations).toEqual([])
    expect(englishLeftIn(await visibleText(page), "ja")).toEqual([])
    await axe(page, "ja")
    await page.screenshot({ path: join(artifacts, "checkout-picker-ja.png"), fullPage: true })

    await page.reload()
    await waitForText(page, "#state", "equals", messages.ja["state.awaitingWallet"])
    expect(await page.getAttribute("html", "lang")).toBe("ja")
    expect(await page.inputValue("#language")).toBe("ja")
    await page.selectOption("#language", "de")
    await waitForText(page, "#state", "equals", messages.de["state.awaitingWallet"])
    expect(await page.getAttribute("html", "lang")).toBe("de")
    await context.close()
  }, 60_000)

  it("offers no phone hand-off on a phone (a coarse pointer), and does on a computer", async () => {
    const phone = await contextFor("en-US", { isMobile: true, hasTouch: true })
    const page = await phone.newPage()
    await page.goto(open.checkout_url)
    // This phone has no wallet in its browser: the links into wallet apps take the connect button's place.
    await page.waitForSelector("#apps:not([hidden])")
    expect(await page.evaluate('matchMedia("(pointer: coarse)").matches')).toBe(true)
    expect(await page.isVisible("#phone")).toBe(false)
    await page.screenshot({ path: join(artifacts, "checkout-on-a-phone.png"), fullPage: true })
    await phone.close()

    const computer = await contextFor("en-US")
    const desk = await computer.newPage()
    await desk.goto(open.checkout_url)
    await desk.waitForSelector("#connect:not([hidden])")
    expect(await desk.evaluate('matchMedia("(pointer: coarse)").matches')).toBe(false)
    await desk.waitForSelector("#phone:not([hidden])")
    await computer.close()
  }, 60_000)
})
