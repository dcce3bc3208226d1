import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { Effect } from "effect"
import pg from "pg"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../services/merchants/Accounts"
import { launchChromium, waitForText, watchPage } from "../support/Browser"
import { createMerchant } from "../support/Merchant"
import { type RunningService, startService } from "../support/Service"

/**
 * Team's "My notices by email" in Chromium, under the page's strict CSP: a signed-in member sees a checkbox per kind
 * (all on), turns one off, and the API then answers the same choice; axe finds nothing serious.
 */

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

let service: RunningService
let browser: Browser
let page: Page
let watched: ReturnType<typeof watchPage>
let sessionToken: string

beforeAll(async () => {
  service = await startService()
  const merchant = await createMerchant(service.databaseUrl)
  const accountId = merchant.accountId.slice("acct_".length)
  const db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
  const member = await db.query<{ id: string }>(
    "insert into members (id, account_id, email, created_at) values (gen_random_uuid(), $1, $2, now()) returning id",
    [accountId, `notices-${Date.now()}@example.test`]
  )
  await db.end()
  sessionToken = (
    await service.runtime.runPromise(
      Effect.flatMap(Accounts, (accounts) =>
        accounts.createSession(accountId, { memberId: member.rows[0]!.id })
      )
    )
  ).token
  browser = await launchChromium()
  const context = await browser.newContext({ bypassCSP: false, viewport: { width: 360, height: 780 } })
  page = await context.newPage()
  watched = watchPage(page, service.baseUrl)
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

/** The member's choices as the API answers them (the dashboard traded the session, so ask with the page's). */
const choices = () =>
  page.evaluate(`(async () => {
    const stored = JSON.parse(sessionStorage.getItem("deposits.session") ?? "null")
    const res = await fetch("/v1/account/member/notices", { headers: { authorization: "Bearer " + stored.token } })
    return await res.json()
  })()`) as Promise<Record<string, boolean>>

describe("Team: notices by email", () => {
  it("shows a checkbox per kind and saves a change at once", async () => {
    await page.goto(`${service.baseUrl}/dashboard/`)
    await waitForText(page, "main h1", "equals", "Sign in to the dashboard")
    await page.click("summary")
    await page.fill("#cli-token", sessionToken)
    await page.click("button:text-is('Use this token')")
    await waitForText(page, "main h1", "equals", "Overview")
    await page.evaluate(`location.hash = "#/team"`)
    await waitForText(page, "section[aria-labelledby=notices-title] h2", "equals", "My notices by email")
    await page.waitForSelector("input[name=return_held]")
    const boxes = await page.$$eval("section[aria-labelledby=notices-title] input[type=checkbox]", (inputs) =>
      inputs.map((i) => [
        (i as unknown as { name: string; checked: boolean }).name,
        (i as unknown as { name: string; checked: boolean }).checked
      ])
    )
    expect(boxes).toEqual([
      ["request_paused", true],
      ["endpoint_failing", true],
      ["return_held", true]
    ])
    await page.click("label:has-text('A return to a payer is held')")
    await waitForText(page, "section[aria-labelledby=notices-title] .notice", "includes", "off")
    expect(await page.isChecked("input[name=return_held]")).toBe(false)
    expect(await choices()).toEqual({ request_paused: true, endpoint_failing: true, return_held: false })
    await page.evaluate(axeSource)
    const result = (await page.evaluate("axe.run()")) as { violations: Array<{ id: string; impact: string }> }
    expect(result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([])
    expect([watched.foreign, watched.errors]).toEqual([[], []])
  }, 60_000)
})
