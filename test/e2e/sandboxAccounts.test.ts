import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, waitForText } from "../support/Browser"
import { createMerchant, type Merchant } from "../support/Merchant"
import { type RunningService, startService } from "../support/Service"

// Issue 48, item 7 (decision 0087), in Chromium: the sandbox's sign-in page shows the account already made and one
// click lands in its dashboard; an error's doc_url opens the errors page on the code's own line.

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

let service: RunningService
let merchant: Merchant
let browser: Browser

beforeAll(async () => {
  service = await startService()
  merchant = await createMerchant(service.databaseUrl)
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

/** No serious or critical accessibility violation (axe-core, run in the page), and nothing wider than 360 px. */
const axe = async (page: Page, step: string) => {
  await page.evaluate(axeSource)
  const result = (await page.evaluate("axe.run()")) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>
  }
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(bad.map((v) => `${step}: ${v.id} ${JSON.stringify(v.nodes.map((n) => n.target))}`)).toEqual([])
  expect([step, await page.evaluate("document.documentElement.scrollWidth")]).toEqual([step, 360])
}

const newPage = async () => {
  const context = await browser.newContext({ viewport: { width: 360, height: 780 } })
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(e.message))
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text())
  })
  return { page, errors }
}

describe("the sandbox sign-in in Chromium", () => {
  it("shows the account already made, and one click opens its dashboard", async () => {
    const { page, errors } = await newPage()
    await page.goto(`${service.baseUrl}/dashboard/`)
    const offered = page.locator("section[aria-labelledby='sandbox-accounts'] li", {
      hasText: merchant.accountId
    })
    await offered.waitFor({ state: "visible", timeout: 30_000 })
    expect(await offered.textContent()).toContain("Test merchant")
    await axe(page, "sign-in with the sandbox's accounts")
    const handed = page.waitForResponse((r) => r.url().endsWith("/dashboard/sandbox/sign-in"))
    await offered.getByRole("button", { name: "Sign in as Test merchant" }).click()
    const handedToken = ((await (await handed).json()) as { session_token: string }).session_token
    await page.locator("nav.views").waitFor({ state: "visible", timeout: 30_000 })
    await waitForText(page, "header.top", "includes", "Test merchant")
    // The session handed over was traded at once, as the CLI's link's is: the page keeps another one, of the same
    // account, and the one handed over no longer works.
    const kept = (await page.evaluate(
      "JSON.parse(sessionStorage.getItem('deposits.session')).token"
    )) as string
    expect(kept).toMatch(/^session_/)
    expect(kept).not.toBe(handedToken)
    const as = (token: string) =>
      service.request("/v1/account", { headers: { authorization: `Bearer ${token}` } })
    const account = await as(kept)
    expect(((await account.json()) as { id: string }).id).toBe(merchant.accountId)
    expect((await as(handedToken)).status).toBe(401)
    await axe(page, "the dashboard signed in")
    // A refusal of an action links its code's line in the docs ("Learn more").
    await page.click("a[href='#/webhooks']")
    await page.fill("#webhook-url", "http://127.0.0.1:4000/hooks")
    await page.click("button:text-is('Add endpoint')")
    const learnMore = page.locator("p.refusal a", { hasText: "Learn more about this error" })
    await learnMore.waitFor({ state: "visible", timeout: 30_000 })
    expect(await learnMore.getAttribute("href")).toBe(`${service.baseUrl}/docs/errors#invalid_request`)
    await axe(page, "a refusal with its docs link")
    expect(errors.filter((e) => !e.includes("400"))).toEqual([])
  }, 90_000)

  it("opens an error's doc_url on the code's own line, visible", async () => {
    const res = await service.request("/v1/deposit-requests/dr_00000000-0000-0000-0000-000000000000", {
      headers: merchant.headers("api_key")
    })
    const body = (await res.json()) as { error: { code: string; doc_url: string } }
    expect(body.error.code).toBe("deposit_request_not_found")
    const { page, errors } = await newPage()
    const answer = await page.goto(body.error.doc_url)
    expect(answer?.status()).toBe(200)
    const line = page.locator(`[id="${body.error.code}"]`)
    expect(await line.count()).toBe(1)
    expect(await line.isVisible()).toBe(true)
    // The line is the one the address names (`:target`, highlighted), and it is scrolled into view.
    expect(await page.evaluate(`document.querySelector(':target')?.id`)).toBe(body.error.code)
    expect(await line.textContent()).toContain("404")
    const box = await line.boundingBox()
    expect(box).not.toBeNull()
    expect(box!.y).toBeGreaterThanOrEqual(0)
    expect(box!.y).toBeLessThan(780)
    await axe(page, "the errors page")
    expect(errors).toEqual([])
  }, 60_000)
})
