import { randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import { readFileSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { launchChromium, waitForText, watchPage } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { readyRequest } from "../support/Payer"

/**
 * The requests list from a browser in Los Angeles (issue 48): the date filters pick local days and say so, times
 * are shown with their zone, and the one search box finds a request by each identifier a merchant may hold.
 */
const ZONE = "America/Los_Angeles"
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

let local: LocalChain
let running: ChainService
let browser: Browser
let page: Page
let mining: ReturnType<typeof setInterval> | undefined
let watched: ReturnType<typeof watchPage>

beforeAll(async () => {
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  browser = await launchChromium()
  const context = await browser.newContext({
    timezoneId: ZONE,
    locale: "en-US",
    viewport: { width: 360, height: 780 }
  })
  page = await context.newPage()
  watched = watchPage(page, running.service.baseUrl)
  await page.goto(`${running.service.baseUrl}/dashboard/`)
  await waitForText(page, "main h1", "equals", "Sign in to the dashboard")
  await page.click("summary")
  await page.fill("#cli-token", running.merchant.sessionToken)
  await page.click("button:text-is('Use this token')")
  await waitForText(page, "main h1", "equals", "Overview")
}, 90_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await local?.node.stop()
})

const create = async (fields: Record<string, unknown> = {}) => {
  const refs = await running.api.setup()
  const made = await running.api.call<{ id: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...fields },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  return made.body.id
}

/** The ids the table shows, once the list for these filters has answered. */
const shown = async (submit: () => Promise<unknown>, query: (url: string) => boolean) => {
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => r.url().includes("/v1/deposit-requests?") && !r.url().includes("wait_for=") && query(r.url())
    ),
    submit()
  ])
  expect(response.status()).toBe(200)
  await page.waitForSelector("#requests, main p:text-is('No requests match.')")
  return page.$$eval("#requests tbody tr", (rows) => rows.map((r) => r.getAttribute("data-id") ?? ""))
}

const axe = async (step: string) => {
  await page.evaluate(axeSource)
  const result = (await page.evaluate("axe.run()")) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>
  }
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(bad.map((v) => `${step}: ${v.id} ${JSON.stringify(v.nodes.map((n) => n.target))}`)).toEqual([])
}

describe("the requests list in the browser's time zone, with one search box", () => {
  it("picks local days (a 23-hour one too), names the zone, and shows times with it", async () => {
    // Around Sunday 9 March 2025 in Los Angeles, the day clocks went forward: it ran 08:00Z to 07:00Z next day.
    const tag = randomUUID().slice(0, 8)
    const at = {
      [`${tag}-before`]: "2025-03-09T07:30:00Z", // Saturday 23:30 PST
      [`${tag}-first`]: "2025-03-09T08:30:00Z", // Sunday 00:30 PST
      [`${tag}-last`]: "2025-03-10T06:59:00Z", // Sunday 23:59 PDT
      [`${tag}-after`]: "2025-03-10T07:30:00Z" // Monday 00:30 PDT
    }
    const ids: Record<string, string> = {}
    for (const [reference, created] of Object.entries(at)) {
      ids[reference] = await create({ reference })
      await running.db.query("update deposit_requests set created_at = $1 where id = $2", [
        created,
        ids[reference]!.slice(3)
      ])
    }
    await page.evaluate(`location.hash = "#/requests"`)
    await waitForText(page, "#date-zone", "includes", ZONE)
    expect(await page.textContent("#requests thead")).toContain(`Created (${ZONE})`)

    await page.fill("#filter-from", "2025-03-09")
    await page.fill("#filter-to", "2025-03-09")
    const listed = await shown(
      () => page.click("button:text-is('Show')"),
      (url) => url.includes("created_gte=")
    )
    // Local midnights as instants, milliseconds and all, as toISOString writes them.
    const sent = new URL(
      watched.requested.filter((u) => u.includes("created_gte=") && !u.includes("wait_for=")).at(-1)!
    ).searchParams
    expect(sent.get("created_gte")).toBe("2025-03-09T08:00:00.000Z")
    expect(sent.get("created_lt")).toBe("2025-03-10T07:00:00.000Z")
    expect(listed).toEqual([ids[`${tag}-last`], ids[`${tag}-first`]])
    const times = await page.$$eval("#requests tbody time", (ts) => ts.map((t) => t.textContent))
    expect(times).toEqual(["3/9/25, 11:59:00 PM PDT", "3/9/25, 12:30:00 AM PST"])
    await axe("dates")

    // From the Monday on: the one after.
    await page.fill("#filter-from", "2025-03-10")
    await page.fill("#filter-to", "2025-03-10")
    expect(
      await shown(
        () => page.click("button:text-is('Show')"),
        (url) => url.includes("created_gte=2025-03-10T07%3A00%3A00.000Z")
      )
    ).toEqual([ids[`${tag}-after`]])
    // The CSV export takes the same filters and answers.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("button:text-is('Export CSV')")
    ])
    const text = readFileSync(await download.path(), "utf8")
    expect(text.split("\r\n").filter((l) => l.startsWith("dr_"))).toHaveLength(1)
    expect(text).toContain(ids[`${tag}-after`])
    await page.click("button:text-is('Clear')")
  }, 60_000)

  it("finds one request by each identifier typed in the one search box", async () => {
    const tag = randomUUID().slice(0, 8)
    const customer = await running.api.call<{ id: string }>("POST", "/v1/customers", {
      name: "Ada",
      email: `ada.${tag}@example.com`
    })
    const described = await create({
      reference: `order-${tag}`,
      customer_id: customer.body.id,
      payer_policy_mode: "mailbox",
      expected_email: `payer.${tag}@example.org`
    })
    // A paid request to a payout address of its own, so it has a deposit address, a payer wallet and hashes.
    const payer = anvilDevAccount(6)
    const payoutAddress = privateKeyToAccount(generatePrivateKey()).address
    const paid = await readyRequest(
      { service: running.service, api: running.api, payer },
      "1.000000",
      payoutAddress
    )
    await local.mint(payer.address, 1_000_000n)
    await local.pay(payer, paid.address, 1_000_000n)
    let transfers: Array<{ kind: string; transaction_hash: string }> = []
    for (let i = 0; i < 150 && !transfers.some((t) => t.kind === "settlement"); i++) {
      await new Promise((r) => setTimeout(r, 200))
      transfers = (
        await running.api.call<{ transfers: typeof transfers }>(
          "GET",
          `/v1/deposit-requests/${paid.id}/transfers`
        )
      ).body.transfers
    }
    const request = (
      await running.api.call<{ issuer_id: string; payout_address_id: string }>(
        "GET",
        `/v1/deposit-requests/${paid.id}`
      )
    ).body
    const payment = transfers.find((t) => t.kind === "payment")
    const settlement = transfers.find((t) => t.kind === "settlement")
    expect(payment).toBeDefined()
    expect(settlement).toBeDefined()

    const finds: ReadonlyArray<readonly [string, string, string]> = [
      ["request id", described, described],
      ["customer id", customer.body.id, described],
      ["reference", `order-${tag}`, described],
      ["customer email", `Ada.${tag}@Example.com`, described],
      ["expected email", `payer.${tag}@example.org`, described],
      ["issuer id", request.issuer_id, paid.id],
      ["payout address id", request.payout_address_id, paid.id],
      ["deposit address", paid.address, paid.id],
      ["payer wallet", payer.address.toLowerCase(), paid.id],
      ["payout address", payoutAddress, paid.id],
      ["payment hash", payment!.transaction_hash, paid.id],
      ["settlement hash", settlement!.transaction_hash, paid.id]
    ]
    await page.evaluate(`location.hash = "#/requests"`)
    await waitForText(page, "main h1", "equals", "Requests")
    for (const [kind, q, expected] of finds) {
      await page.fill("#search", q)
      const listed = await shown(
        () => page.click("button:text-is('Show')"),
        (url) => new URL(url).searchParams.get("q") === q
      )
      expect([kind, listed]).toEqual([kind, [expected]])
    }
    await axe("search")
    // Nothing found is said so; an id that leads to no request is refused with the API's sentence.
    await page.fill("#search", `order-${randomUUID()}`)
    expect(
      await shown(
        () => page.click("button:text-is('Show')"),
        (url) => url.includes("q=order-")
      )
    ).toEqual([])
    await page.fill("#search", `wh_${randomUUID()}`)
    await page.click("button:text-is('Show')")
    await waitForText(page, ".refusal", "includes", "does not lead to deposit requests")
    expect(watched.errors).toEqual([])
  }, 90_000)
})
