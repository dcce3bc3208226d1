import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium } from "../support/Browser"
import { createMerchant, type Merchant } from "../support/Merchant"
import { type RunningService, startService } from "../support/Service"

/**
 * Issue 35: `/docs` in headless Chromium works offline. Every request the page makes is recorded from the
 * browser's network log; none may leave the service's origin, and Scalar's cloud features are not on the page.
 */
const artifacts = join(process.cwd(), "test", ".artifacts")

let service: RunningService
let browser: Browser
let merchant: Merchant
beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  service = await startService()
  merchant = await createMerchant(service.databaseUrl)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

/** What the page-side functions below use of the browser's window (the tests compile without the DOM's types). */
interface PageStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
}
interface PageWindow {
  readonly origin: string
  readonly sessionStorage: PageStorage
  readonly localStorage: PageStorage
  open(url: string): PageWindow | null
  close(): void
}
const openDocs = async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page: Page = await context.newPage()
  const requests: Array<string> = []
  const failed: Array<string> = []
  const refused: Array<string> = []
  page.on("request", (r) => requests.push(r.url()))
  page.on("requestfailed", (r) => failed.push(r.url()))
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) refused.push(m.text())
  })
  const answer = await page.goto(`${service.baseUrl}/docs`, { waitUntil: "networkidle" })
  await page.waitForSelector("text=Client Libraries", { timeout: 30_000 })
  return { page, requests, failed, refused, answer, close: () => context.close() }
}

describe("/docs", () => {
  it("makes no request to another origin, so it renders offline", async () => {
    const { page, requests, failed, close } = await openDocs()
    // Open an operation and the API client too: more of the bundle runs, and more could reach out.
    await page.click("text=depositRequests")
    await page.click("text=Create a deposit request")
    await page.click("text=Open API Client")
    await page.waitForLoadState("networkidle")
    await page.screenshot({ path: join(artifacts, "docs.png") })
    const foreign = requests.filter(
      (url) => !url.startsWith(`${service.baseUrl}/`) && !url.startsWith("data:")
    )
    expect(foreign).toEqual([])
    // Chromium asks for /favicon.ico on its own; whether the service has one is not this page's concern.
    expect(failed.filter((url) => !url.endsWith("/favicon.ico"))).toEqual([])
    expect(requests[0]).toBe(`${service.baseUrl}/docs`)
    await close()
  })

  it("runs under a strict policy: only its own inline scripts, by digest, and nothing refused", async () => {
    const { page, refused, answer, close } = await openDocs()
    const policy = (await answer!.allHeaders())["content-security-policy"] ?? ""
    expect(policy).toMatch(
      // The memory storage's script, Scalar's bundle and its configuration line.
      /^default-src 'none'; script-src(?: 'sha256-[A-Za-z0-9+/=]+'){3} 'wasm-unsafe-eval';/
    )
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/)
    expect(policy).toContain("connect-src 'self'")
    expect(policy).toMatch(/; sandbox allow-scripts[^;]*$/)
    expect(policy).not.toContain("allow-same-origin")
    // The page still works under it: an operation and the API client open, and the browser refused nothing.
    await page.click("text=depositRequests")
    await page.click("text=Create a deposit request")
    await page.waitForLoadState("networkidle")
    expect(refused).toEqual([])
    await close()
  })

  it("shows no cloud features: no Share, no Generate SDKs, no Scalar toolbar", async () => {
    const { page, close } = await openDocs()
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text; textContent would include the CSS
    const text = await page.innerText("body")
    expect(text).toContain("Deposit Request Service")
    for (const cloud of ["Share", "Generate SDKs", "Deploy", "Configure"]) {
      expect(await page.$(`button:has-text("${cloud}")`)).toBeNull()
      expect(text).not.toContain(cloud)
    }
    await close()
  })

  it("preselects the API key scheme (a bearer token)", async () => {
    const { page, close } = await openDocs()
    expect(await page.isVisible("text=Bearer Token")).toBe(true)
    expect(await page.isVisible("text=No authentication selected")).toBe(false)
    await page.screenshot({ path: join(artifacts, "docs-auth.png"), fullPage: false })
    await close()
  })

  it("shows the create example as the OpenAPI gives it: no empty strings, a real idempotency key", async () => {
    const { page, close } = await openDocs()
    await page.click("text=depositRequests")
    await page.click("text=Create a deposit request")
    await page.waitForSelector("text=Request Example for", { timeout: 30_000 })
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text; textContent would include the CSS
    const text = await page.innerText("body")
    const sample = text.slice(text.indexOf("curl", text.indexOf("Create a deposit request")))
    expect(sample).toContain("--header 'idempotency-key: order-4711-2e7c9a4b'")
    expect(sample).toContain('"amount": "25.000000"')
    expect(sample.slice(0, sample.indexOf("}'"))).not.toContain('""')
    await close()
  })

  it("runs in an opaque origin: the dashboard's session and sign-in secret are out of its reach", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    // What the dashboard keeps in this browser: its session (sessionStorage) and the sign-in binding (localStorage).
    await page.goto(`${service.baseUrl}/dashboard`)
    await page.evaluate((token) => {
      const w = globalThis as unknown as PageWindow
      w.sessionStorage.setItem("deposits.session", JSON.stringify({ token, expires_at: null }))
      w.localStorage.setItem("deposits.signInBinding", "binding-secret")
    }, merchant.sessionToken)
    // Then the reference page, in the same tab: Scalar's bundle runs, but in an origin of its own.
    await page.goto(`${service.baseUrl}/docs`, { waitUntil: "networkidle" })
    await page.waitForSelector("text=Client Libraries", { timeout: 30_000 })
    const seen = await page.evaluate(
      async ({ base }) => {
        const w = globalThis as unknown as PageWindow
        const opened = w.open(`${base}/dashboard`)
        await new Promise((resolve) => setTimeout(resolve, 500))
        let dashboardTab: string
        try {
          dashboardTab = String(opened?.sessionStorage.getItem("deposits.session"))
        } catch (e) {
          dashboardTab = (e as Error).name
        }
        opened?.close()
        return {
          origin: w.origin,
          session: w.sessionStorage.getItem("deposits.session"),
          binding: w.localStorage.getItem("deposits.signInBinding"),
          dashboardTab
        }
      },
      { base: service.baseUrl }
    )
    expect(seen).toEqual({ origin: "null", session: null, binding: null, dashboardTab: "SecurityError" })
    // Back on the dashboard both are still there: the reference page's storage is its own, in memory.
    await page.goto(`${service.baseUrl}/dashboard`)
    expect(
      await page.evaluate(() =>
        (globalThis as unknown as PageWindow).localStorage.getItem("deposits.signInBinding")
      )
    ).toBe("binding-secret")
    await context.close()
  })

  it("still tries requests: the API answers its opaque origin, with a token typed into it", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${service.baseUrl}/docs`, { waitUntil: "networkidle" })
    await page.waitForSelector("text=Client Libraries", { timeout: 30_000 })
    const answers = await page.evaluate(
      async ({ base, key }) => {
        const call = (token: string) =>
          fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${token}` } }).then(
            (r) => r.status,
            () => "blocked"
          )
        return { withKey: await call(key), without: await call("nope") }
      },
      { base: service.baseUrl, key: merchant.apiKey }
    )
    expect(answers).toEqual({ withKey: 200, without: 401 })
    await context.close()
  })
})
