import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, waitForText } from "../support/Browser"
import { createMerchant, type Merchant } from "../support/Merchant"
import { type RunningService, startService } from "../support/Service"

/**
 * Issue 48 (6): one sign-in serves every tab of a browser. Tabs share the session through a channel of the
 * dashboard's origin: a new tab asks the open ones, a refresh in one is adopted by all (the traded token ends, so a
 * tab that kept it would be signed out), a tab that sent an ended token takes the newer one and retries, and a
 * log-out in one signs all out. Another browser (context) shares nothing.
 */
let service: RunningService
let merchant: Merchant
let browser: Browser
beforeAll(async () => {
  service = await startService()
  merchant = await createMerchant(service.databaseUrl)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

interface StoredSession {
  readonly token: string
  readonly expires_at: string | null
}
/** What the page-side functions use of the window (the tests compile without the DOM's types). */
interface PageWindow {
  readonly sessionStorage: {
    getItem(key: string): string | null
    setItem(key: string, value: string): void
  }
}
const KEY = "deposits.session"

const stored = async (page: Page): Promise<StoredSession | null> =>
  JSON.parse(
    (await page.evaluate((key) => (globalThis as unknown as PageWindow).sessionStorage.getItem(key), KEY)) ??
      "null"
  ) as StoredSession | null

/** Puts a session in this tab's storage only (as a tab that missed news would have it). */
const keepOnly = (page: Page, session: StoredSession) =>
  page.evaluate(([key, value]) => (globalThis as unknown as PageWindow).sessionStorage.setItem(key, value), [
    KEY,
    JSON.stringify(session)
  ] as const)

const until = async (what: string, test: () => Promise<boolean>, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (await test()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`not within ${timeoutMs} ms: ${what}`)
}

const accepts = async (token: string) =>
  (await service.request("/v1/account", { headers: { authorization: `Bearer ${token}` } })).status

describe("the dashboard's tabs", () => {
  let context: BrowserContext
  let first: Page
  let second: Page

  it("a new tab is signed in by the one already open, with the same session", async () => {
    context = await browser.newContext()
    first = await context.newPage()
    await first.goto(`${service.baseUrl}/dashboard/`)
    await waitForText(first, "main h1", "equals", "Sign in to the dashboard")
    await keepOnly(first, { token: merchant.sessionToken, expires_at: null })
    await first.reload()
    await waitForText(first, "main h1", "equals", "Overview")
    const signedIn = (await stored(first))!
    expect(signedIn.token).not.toBe(merchant.sessionToken)

    second = await context.newPage()
    await second.goto(`${service.baseUrl}/dashboard/#/developers`)
    await waitForText(second, "main h1", "equals", "Developers")
    expect((await stored(second))?.token).toBe(signedIn.token)

    // Another browser shares nothing: it has to sign in.
    const stranger = await browser.newContext()
    const elsewhere = await stranger.newPage()
    await elsewhere.goto(`${service.baseUrl}/dashboard/`)
    await waitForText(elsewhere, "main h1", "equals", "Sign in to the dashboard")
    await stranger.close()
  }, 60_000)

  it("a refresh in one tab is adopted by the other, which keeps working on the fresh session", async () => {
    const before = (await stored(second))!
    // The second tab's session is about to expire: on reload it trades it, and the first tab must follow.
    await keepOnly(second, { token: before.token, expires_at: new Date(Date.now() + 30_000).toISOString() })
    await second.reload()
    await waitForText(second, "main h1", "equals", "Developers")
    const fresh = (await stored(second))!
    expect(fresh.token).not.toBe(before.token)
    await until(
      "the first tab adopts the fresh session",
      async () => (await stored(first))?.token === fresh.token
    )
    expect(await accepts(before.token)).toBe(401)
    await first.click("nav a:text-is('Team')")
    await waitForText(first, "main h1", "equals", "Team")
    expect(await first.$("#app .signin")).toBeNull()
  }, 60_000)

  it("a tab that sent an ended token takes the open tabs' newer one and retries, instead of signing out", async () => {
    const current = (await stored(second))!
    // As if the first tab had missed the news: it still holds a token that has ended.
    await keepOnly(first, { token: merchant.sessionToken, expires_at: current.expires_at })
    await first.click("nav a:text-is('Developers')")
    await waitForText(first, "main h1", "equals", "Developers")
    await waitForText(first, "#key-info", "includes", "")
    await until(
      "the first tab holds the newer token",
      async () => (await stored(first))?.token === current.token
    )
    expect(await first.$("#app .signin")).toBeNull()
  }, 60_000)

  it("logging out in one tab signs every tab out", async () => {
    const session = (await stored(first))!
    await first.click("button:text-is('Log out')")
    await waitForText(first, "main h1", "equals", "Sign in to the dashboard")
    await waitForText(second, "main h1", "equals", "Sign in to the dashboard")
    await waitForText(second, ".signin .refusal", "equals", "Logged out in another tab.")
    expect(await stored(first)).toBeNull()
    expect(await stored(second)).toBeNull()
    expect(await accepts(session.token)).toBe(401)
    await context.close()
  }, 60_000)
})
