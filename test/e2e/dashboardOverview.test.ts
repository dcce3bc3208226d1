import { createRequire } from "node:module"
import { readFileSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { usdc } from "../../src/web/checkout/page/amounts"
import { launchChromium, waitForText, watchPage } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { readyRequest } from "../support/Payer"

/**
 * The overview, the dashboard's home (issue 48, item 1), from a browser in Los Angeles: its figures are the
 * summary route's answer for the zone it shows, and they equal the requests the test paid on the chain; it passes
 * axe at desktop width and at 360 px.
 */
const ZONE = "America/Los_Angeles"
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
const paid = [1_500_000n, 2_250_000n, 100n]
const total = paid.reduce((a, b) => a + b, 0n)

interface Period {
  readonly settled_volume_base_units: string
  readonly settled_count: number
  readonly created_count: number
  readonly returned_volume_base_units: string
}
interface Summary {
  readonly time_zone: string
  readonly periods: Record<"today" | "last_7_days" | "last_30_days", Period>
  readonly days: ReadonlyArray<{ readonly date: string; readonly settled_volume_base_units: string }>
  readonly recent_events: ReadonlyArray<{ readonly id: string; readonly deposit_request_id: string | null }>
}

let local: LocalChain
let running: ChainService
let browser: Browser
let page: Page
let mining: ReturnType<typeof setInterval> | undefined
let watched: ReturnType<typeof watchPage>
const refusedByCsp: Array<string> = []
const paidIds: Array<string> = []

const settle = async (units: bigint, payerIndex: number) => {
  const payer = anvilDevAccount(payerIndex)
  const amount = `${units / 1_000_000n}.${(units % 1_000_000n).toString().padStart(6, "0")}`
  const request = await readyRequest(
    { service: running.service, api: running.api, payer },
    amount,
    privateKeyToAccount(generatePrivateKey()).address
  )
  await local.mint(payer.address, units)
  await local.pay(payer, request.address, units)
  for (let i = 0; i < 200; i++) {
    const r = await running.api.call<{ status: string }>("GET", `/v1/deposit-requests/${request.id}`)
    if (r.body.status === "settled") return request.id
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${request.id} did not settle`)
}

beforeAll(async () => {
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  for (const [i, units] of paid.entries()) paidIds.push(await settle(units, 5 + i))
  browser = await launchChromium()
  const context = await browser.newContext({
    timezoneId: ZONE,
    locale: "en-US",
    viewport: { width: 1280, height: 900 }
  })
  page = await context.newPage()
  watched = watchPage(page, running.service.baseUrl)
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) refusedByCsp.push(m.text())
  })
  await page.goto(`${running.service.baseUrl}/dashboard/`)
  await waitForText(page, "main h1", "equals", "Sign in to the dashboard")
  await page.click("summary")
  await page.fill("#cli-token", running.merchant.sessionToken)
  await page.click("button:text-is('Use this token')")
}, 120_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await local?.node.stop()
})

const axe = async (step: string) => {
  await page.evaluate(axeSource)
  const result = (await page.evaluate("axe.run()")) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>
  }
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(bad.map((v) => `${step}: ${v.id} ${JSON.stringify(v.nodes.map((n) => n.target))}`)).toEqual([])
}

const text = async (selector: string) => ((await page.textContent(selector)) ?? "").trim()

/** What the page shows of the three periods, read as the route's fields. */
const shownPeriods = async () => {
  const out: Record<string, Record<string, string>> = {}
  for (const id of ["period-today", "period-last-7-days", "period-last-30-days"]) {
    out[id] = {
      settled_volume: await text(`#${id} .settled-volume`),
      settled_count: await text(`#${id} .settled-count`),
      created_count: await text(`#${id} .created-count`),
      returned_volume: await text(`#${id} .returned-volume`)
    }
  }
  return out
}

const expectedPeriods = (s: Summary) => {
  const out: Record<string, Record<string, string>> = {}
  for (const [key, id] of [
    ["today", "period-today"],
    ["last_7_days", "period-last-7-days"],
    ["last_30_days", "period-last-30-days"]
  ] as const) {
    const p = s.periods[key]
    out[id] = {
      settled_volume: usdc(p.settled_volume_base_units),
      settled_count: String(p.settled_count),
      created_count: String(p.created_count),
      returned_volume: usdc(p.returned_volume_base_units)
    }
  }
  return out
}

describe("the overview, the dashboard's home", () => {
  it("shows the summary route's figures for the browser's zone, equal to what was paid", async () => {
    await waitForText(page, "main h1", "equals", "Overview")
    expect(await page.getAttribute("nav.views a[aria-current=page]", "href")).toBe("#/overview")
    // The requests list stays one click away.
    expect(await page.$("nav.views a[href='#/requests']")).not.toBeNull()
    await waitForText(page, "#overview-zone-shown", "includes", ZONE)
    expect(await page.inputValue("#overview-zone")).toBe(ZONE)

    const answer = await running.service.request(
      `/v1/account/summary?time_zone=${encodeURIComponent(ZONE)}`,
      {
        headers: running.merchant.headers("api_key")
      }
    )
    const summary = (await answer.json()) as Summary
    // The route's figures are the requests paid here: three settlements, three requests.
    expect(summary.periods.today.settled_volume_base_units).toBe(total.toString())
    expect(summary.periods.today.settled_count).toBe(paid.length)
    expect(summary.periods.today.created_count).toBe(paid.length)

    const shown = await shownPeriods()
    expect(shown).toEqual(expectedPeriods(summary))
    expect(shown["period-today"]?.settled_volume).toBe(usdc(total))
    expect(usdc(total)).toBe("3.7501 USDC")

    // The chart: 30 bars, today's the last, carrying the day's volume.
    const bars = await page.$$eval("#day-chart rect.bar", (rects) =>
      rects.map((r) => [
        r.getAttribute("data-date"),
        r.getAttribute("data-units"),
        Number(r.getAttribute("height"))
      ])
    )
    expect(bars.map(([date, units]) => [date, units])).toEqual(
      summary.days.map((d) => [d.date, d.settled_volume_base_units])
    )
    expect(bars.at(-1)?.[2]).toBe(120)

    // The last events name the paid requests, each a link to it.
    const linked = await page.$$eval("#recent-events a", (as) => as.map((a) => a.getAttribute("href")))
    for (const id of paidIds) expect(linked).toContain(`#/requests/${id}`)
    await waitForText(page, "#needs-action", "includes", "Nothing needs action.")
    await axe("overview at desktop width")
  }, 60_000)

  it("recounts in another zone picked, and passes axe at 360 px", async () => {
    await page.selectOption("#overview-zone", "Asia/Tokyo")
    await waitForText(page, "#overview-zone-shown", "includes", "Asia/Tokyo")
    // By the key: the CLI's session the page started with was traded for the page's own.
    const answer = await running.service.request("/v1/account/summary?time_zone=Asia/Tokyo", {
      headers: running.merchant.headers("api_key")
    })
    const tokyo = (await answer.json()) as Summary
    expect(tokyo.time_zone).toBe("Asia/Tokyo")
    expect(await shownPeriods()).toEqual(expectedPeriods(tokyo))
    expect(tokyo.periods.last_7_days.settled_volume_base_units).toBe(total.toString())

    await page.setViewportSize({ width: 360, height: 780 })
    await page.selectOption("#overview-zone", ZONE)
    await waitForText(page, "#overview-zone-shown", "includes", ZONE)
    const width = await page.evaluate("document.documentElement.scrollWidth")
    expect(width).toBeLessThanOrEqual(360)
    await axe("overview at 360 px")
    // The requests list is reached from the navigation.
    await page.click("nav.views a[href='#/requests']")
    await waitForText(page, "main h1", "equals", "Requests")
    expect(watched.errors).toEqual([])
    expect(watched.foreign).toEqual([])
    expect(refusedByCsp).toEqual([])
  }, 60_000)
})
