import { randomUUID } from "node:crypto"
import { copyFileSync, mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { launchChromium, waitForText, watchPage } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../support/HttpsReceiver"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { readyRequest } from "../support/Payer"
import { Effect } from "effect"
import { ActorHost } from "../../services/actors/ActorHost"
import { csv, REQUEST_COLUMNS, requestRow } from "../../services/depositRequests/RequestCsv"

/**
 * The merchant dashboard in Debian's Chromium against the whole service on PostgreSQL and the local chain: every
 * view with real data and no serious accessibility violation, from a 360 px wide screen, with nothing fetched
 * from another origin. The session comes from the test support (the sign-in routes are another branch's).
 */
const artifacts = join(process.cwd(), "test", ".artifacts")
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

let local: LocalChain
let running: ChainService
let browser: Browser
let context: BrowserContext
let page: Page
let receiver: Awaited<ReturnType<typeof startReceiver>>
let mining: ReturnType<typeof setInterval> | undefined
let watched: ReturnType<typeof watchPage>
let refs: { issuerId: string; payoutAddressId: string }

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  local = await startLocalChain()
  // The receiver refuses its first request, so a delivery log has a failure and a success.
  receiver = await startReceiver(tls, (n) => (n === 1 ? 500 : 200))
  running = await startChainService(local, {
    mineWhileWaiting: true,
    config: { webhookFirstRetryMs: 200 },
    service: { webhookNetwork: localReceiverNetwork(HOST, tls.ca) }
  })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  refs = await running.api.setup()
  browser = await launchChromium()
  context = await browser.newContext({ bypassCSP: false, viewport: { width: 360, height: 780 } })
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: running.service.baseUrl })
  page = await context.newPage()
  watched = watchPage(page, running.service.baseUrl)
}, 90_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await receiver?.close()
  await local?.node.stop()
})

const dashboard = () => `${running.service.baseUrl}/dashboard/`

/** No serious or critical accessibility violations (axe-core, run in the page). */
const axe = async (step: string) => {
  await page.evaluate(axeSource)
  const result = (await page.evaluate("axe.run()")) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>
  }
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(bad.map((v) => `${step}: ${v.id} ${JSON.stringify(v.nodes.map((n) => n.target))}`)).toEqual([])
  // Usable at 360 px: nothing wider than the screen (wide tables scroll in their own region).
  const wide = await page.evaluate(
    `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 361 && !e.closest(".scroll")).map((e) => e.tagName + "." + e.className + ":" + (e.textContent ?? "").slice(0, 40))`
  )
  expect([step, await page.evaluate("document.documentElement.scrollWidth"), wide]).toEqual([step, 360, []])
}

const shot = (name: string) =>
  page.screenshot({ path: join(artifacts, `dashboard-${name}.png`), fullPage: true })

/** A view by its fragment route, once its heading is there. */
const open = async (route: string, heading: string) => {
  await page.evaluate(`location.hash = ${JSON.stringify(route)}`)
  await waitForText(page, "main h1", "equals", heading)
}

const createRequest = async (amount: string, extra: Record<string, unknown> = {}) => {
  const made = await running.api.call<{ id: string; checkout_url: string; version: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...extra },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body
}

const storedSession = () =>
  page.evaluate(`sessionStorage.getItem("deposits.session")`) as Promise<string | null>

describe("the merchant dashboard", () => {
  it("serves one page under a strict CSP, keeps a refreshed session in sessionStorage, and lists requests", async () => {
    await createRequest("12.500000", { heading: "Order 7", reference: "ref-7" })
    // Without the slash too.
    expect((await fetch(`${running.service.baseUrl}/dashboard`)).status).toBe(200)
    const res = await page.goto(dashboard())
    const csp = res?.headers()["content-security-policy"] ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self';")
    expect(csp).toContain("style-src 'self';")
    // The embedded object store takes uploads on this very origin: nothing more in connect-src.
    expect(csp).toContain("connect-src 'self';")
    expect(res?.headers()["x-content-type-options"]).toBe("nosniff")
    // Signed out: the sign-in screen.
    await waitForText(page, "main h1", "equals", "Sign in to the dashboard")
    // The sandbox's way in before sign-in by email: the session token the CLI printed. A wrong one is refused
    // with the API's sentence.
    await page.click("summary")
    await page.fill("#cli-token", "session_wrong")
    await page.click("button:text-is('Use this token')")
    await waitForText(
      page,
      ".signin .refusal",
      "startsWith",
      "Send a valid API key or dashboard session token"
    )
    await page.click("summary")
    await page.fill("#cli-token", running.merchant.sessionToken)
    await page.click("button:text-is('Use this token')")
    // The home is the overview; the requests list is one click away.
    await waitForText(page, "main h1", "equals", "Overview")
    // The app traded it for a fresh session whose expiry it knows, kept in this tab's sessionStorage.
    const stored = JSON.parse((await storedSession()) ?? "null") as { token: string; expires_at: string }
    expect(stored.token).toMatch(/^session_/)
    expect(stored.token).not.toBe(running.merchant.sessionToken)
    expect(Date.parse(stored.expires_at)).toBeGreaterThan(Date.now() + 60 * 60_000)
    // The old token was ended by the refresh.
    const old = await running.service.request("/v1/account", {
      headers: { authorization: `Bearer ${running.merchant.sessionToken}` }
    })
    expect(old.status).toBe(401)
    // The environment is always in the header.
    await waitForText(page, "#environment", "equals", "Sandbox")
    await page.click("nav.views a[href='#/requests']")
    await waitForText(page, "main h1", "equals", "Requests")
    await waitForText(page, "#requests", "includes", "Order 7")
    expect(await page.textContent("#requests")).toContain("12.50 USDC")
    await axe("requests")
    await shot("requests")
  }, 90_000)

  it("creates a request from the form and copies its checkout link", async () => {
    await open("#/requests", "Requests")
    await page.click("button:text-is('New request')")
    await page.waitForSelector("#new-issuer option", { state: "attached" })
    await page.fill("#new-amount", "3.25")
    await page.fill("#new-heading", "Invoice 88")
    await page.fill("#new-reference", "inv-88")
    await page.fill("#new-metadata", '{"order": "88"}')
    await axe("create form")
    await page.click("button:text-is('Create request')")
    await page.waitForSelector("#new-checkout-link, #create-request .refusal")
    expect(await page.$$eval("#create-request .refusal", (ps) => ps.map((p) => p.textContent))).toEqual([])
    const link = (await page.textContent("#new-checkout-link")) ?? ""
    expect(link).toMatch(new RegExp(`^${running.service.baseUrl}/checkout/dr_`))
    await page.click("#copy-checkout-link")
    await waitForText(page, "#create-request .secret", "includes", "Copied.")
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(link)
    const id = link.slice(link.lastIndexOf("/") + 1)
    const made = await running.api.call<{ reference: string; metadata: unknown; amount_base_units: string }>(
      "GET",
      `/v1/deposit-requests/${id}`
    )
    expect(made.body).toMatchObject({
      reference: "inv-88",
      metadata: { order: "88" },
      amount_base_units: "3250000"
    })
    // The list follows without a reload.
    await waitForText(page, "#requests", "includes", "Invoice 88", 15_000)
    await shot("create")
  }, 60_000)

  it("shows an API refusal as its sentence, and searches by reference", async () => {
    await open("#/requests", "Requests")
    if ((await page.$("#create-request")) === null) await page.click("button:text-is('New request')")
    await page.waitForSelector("#new-issuer option", { state: "attached" })
    await page.fill("#new-amount", "1")
    await page.fill("#new-return", "http://shop.example.com/back")
    await page.click("button:text-is('Create request')")
    const refusal = page.locator("#create-request .refusal")
    await refusal.waitFor()
    const text = (await refusal.textContent()) ?? ""
    expect(text).toMatch(/return_url/i)
    expect(text).not.toMatch(/^\{|invalid_request/)
    await page.click("button:text-is('New request')")
    expect(await page.$("#create-request")).toBeNull()
    // Searching by a reference: the one search box, recognised by the list.
    await page.fill("#search", "ref-7")
    await page.click("button:text-is('Show')")
    await waitForText(page, "#requests", "includes", "Order 7")
    await axe("refusal")
    await page.click("button:text-is('Clear')")
  }, 60_000)

  it("exports the filtered list as CSV, walking the cursor, rows as the API lists them", async () => {
    await createRequest("0.000001", { reference: 'quote " and, comma', metadata: { note: "line\nbreak" } })
    // Fifty-one requests and more: the file holds them all, as the list shows them.
    for (let batch = 0; batch < 5; batch++)
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => createRequest("1.000000", { reference: `bulk-${batch}-${i}` }))
      )
    await open("#/requests", "Requests")
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("button:text-is('Export CSV')")
    ])
    const file = await download.path()
    // The server streams the file: one request to the export route, no credential in its URL.
    const exports = watched.requested.filter((u) => u.includes("/v1/deposit-requests/export.csv"))
    expect(exports).toHaveLength(1)
    expect(exports[0]).not.toMatch(/session_|service_test_|token=/)
    const text = readFileSync(file, "utf8")
    await waitForText(page, "#export-status", "startsWith", "Exported")
    const listed = await running.api.call<{
      deposit_requests: Array<Parameters<typeof requestRow>[0] & { id: string }>
    }>("GET", "/v1/deposit-requests?limit=100")
    const rows = await Promise.all(
      listed.body.deposit_requests.map(async (r) => {
        const t = await running.api.call<{ transfers: Array<{ transaction_hash: string }> }>(
          "GET",
          `/v1/deposit-requests/${r.id}/transfers`
        )
        return requestRow(
          r,
          t.body.transfers.map((x) => x.transaction_hash)
        )
      })
    )
    expect(text).toBe(csv(REQUEST_COLUMNS, rows))
    expect(text).toContain('"quote "" and, comma"')
    expect(text).toContain(",0.000001,1,")
    expect(rows.length).toBeGreaterThan(50)
    expect(text.split("\r\n").filter((l) => l.includes(",bulk-"))).toHaveLength(50)
  }, 60_000)

  it("follows a request live as it is paid, without a reload", async () => {
    const payer = anvilDevAccount(5)
    const ready = await readyRequest({ service: running.service, api: running.api, payer }, "2.000000")
    await open(`#/requests/${ready.id}`, "Request " + ready.id)
    await waitForText(page, "#amount-requested", "equals", "2.00 USDC")
    expect(await page.textContent("#amount-received")).toBe("0.00 USDC")
    await page.evaluate("window.__sameDocument = true")
    await local.mint(payer.address, 2_000_000n)
    await local.pay(payer, ready.address, 2_000_000n)
    await waitForText(page, "#amount-received", "equals", "2.00 USDC", 30_000)
    await waitForText(page, "#amount-settled", "equals", "2.00 USDC", 30_000)
    await waitForText(page, "#timeline", "includes", "Settled to the payout address", 30_000)
    await page.waitForSelector("#transfers")
    expect(await page.textContent("#transfers")).toMatch(/0x[0-9a-f]{64}/)
    // Each amount once, adding up to what was received; the issuer by its name; hashes and addresses copyable.
    expect(await page.textContent("#amount-returned")).toBe("0.00 USDC")
    expect(await page.textContent("#amount-held")).toBe("0.00 USDC")
    expect(await page.textContent("main")).not.toContain("Recovered")
    const paid = await running.api.call<{ issuer_id: string }>("GET", `/v1/deposit-requests/${ready.id}`)
    const issuer = await running.api.call<{ display_name: string }>(
      "GET",
      `/v1/issuers/${paid.body.issuer_id}`
    )
    await waitForText(page, "#issuer", "includes", issuer.body.display_name)
    expect(await page.textContent("#issuer")).toContain(paid.body.issuer_id)
    await page.click("#transfers button[aria-label='Copy the transaction hash']")
    expect(await page.evaluate("navigator.clipboard.readText()")).toMatch(/^0x[0-9a-f]{64}$/)
    await page.click("button[aria-label='Copy the deposit address']")
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(ready.address)
    expect(await page.evaluate("window.__sameDocument")).toBe(true)
    await axe("request")
    await shot("request")
  }, 90_000)

  it("shows a paused request's attention, and resumes it with the Resume button", async () => {
    const payer = anvilDevAccount(6)
    const ready = await readyRequest({ service: running.service, api: running.api, payer }, "4.000000")
    await open(`#/requests/${ready.id}`, `Request ${ready.id}`)
    await waitForText(page, "main", "includes", "ready")
    // What the chain watcher raises after a deep reorganisation, given to the service's own actor host.
    await running.service.runtime.runPromise(
      Effect.flatMap(ActorHost, (host) =>
        host.apply(ready.id.slice(3), `deep-reorg:test:${ready.id}`, {
          type: "attention.raised",
          at: new Date().toISOString(),
          code: "deep_reorg",
          message: "Block 9, which held a payment, was reorganised after it was final.",
          resolution: "Check on chain whether the payment still exists, then resume it."
        })
      )
    )
    await waitForText(page, "#attention-title", "equals", "Needs attention")
    expect(await page.textContent("main")).toContain("Block 9, which held a payment, was reorganised")
    expect(await page.textContent("main")).toContain("deep_reorg")
    await axe("needs attention")
    await shot("needs-attention")
    await page.click("button:text-is('Resume')")
    await waitForText(page, "#live-status", "includes", "now ready")
    expect(await page.$("#attention-title")).toBeNull()
    const after = await running.api.call<{ status: string; attention: unknown }>(
      "GET",
      `/v1/deposit-requests/${ready.id}`
    )
    expect(after.body).toMatchObject({ status: "ready", attention: null })
  }, 60_000)

  it("cancels a request nobody has paid, only after a confirmation", async () => {
    const request = await createRequest("3.000000", { heading: "Changed my mind" })
    await open(`#/requests/${request.id}`, "Changed my mind")
    await page.click("button:text-is('Cancel this request')")
    // Nothing happens until the second, explicit step.
    const before = await running.api.call<{ status: string }>("GET", `/v1/deposit-requests/${request.id}`)
    expect(before.body.status).toBe("awaiting_payer")
    await page.click("button:text-is('Cancel the request')")
    // Said by the cancel's answer, or by the live follow when its news of the change comes first.
    await waitForText(page, "#live-status", "includes", "now expired.")
    await waitForText(page, "#cancellation", "startsWith", "Cancelled")
    expect(await page.$("button:text-is('Cancel this request')")).toBeNull()
    const after = await running.api.call<{ status: string; cancellation: unknown }>(
      "GET",
      `/v1/deposit-requests/${request.id}`
    )
    expect(after.body).toMatchObject({ status: "expired", cancellation: { reason: null } })
  }, 60_000)

  it("attaches a PDF to a request, uploaded from the page", async () => {
    const request = await createRequest("1.000000", { heading: "With a document" })
    await open(`#/requests/${request.id}`, "With a document")
    await page.setInputFiles("#attachment-file", {
      name: "invoice.pdf",
      mimeType: "application/pdf",
      buffer: Buffer.from("%PDF-1.7\n% invoice\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
    })
    await page.click("button:text-is('Upload')")
    await waitForText(page, "#attachments", "includes", "invoice.pdf")
    const listed = await running.api.call<{ attachments: Array<{ file_name: string }> }>(
      "GET",
      `/v1/deposit-requests/${request.id}/attachments`
    )
    expect(listed.body.attachments.map((a) => a.file_name)).toEqual(["invoice.pdf"])
    // The merchant downloads it again from the page: the same bytes, under its name.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("button[aria-label='Download invoice.pdf']")
    ])
    expect(download.suggestedFilename()).toBe("invoice.pdf")
    const saved = await download.path()
    expect(readFileSync(saved).toString("latin1")).toContain("% invoice")
  }, 60_000)

  it("adds a webhook endpoint (secret shown once), sends a test and shows its deliveries", async () => {
    await open("#/webhooks", "Webhooks")
    await page.fill("#webhook-url", `https://${HOST}:${receiver.port}/hooks`)
    await page.click("button:text-is('Add endpoint')")
    await page.waitForSelector(".secret-value")
    expect(await page.textContent(".secret-value")).toMatch(/^whsec_/)
    await page.waitForSelector("#endpoints li")
    await page.click("button:text-is('Send a test event')")
    await waitForText(page, "#endpoints", "includes", "Test event evt_")
    await axe("webhooks")
    await shot("webhooks")
    await page.click(`#endpoints a`)
    await waitForText(page, "main h1", "startsWith", "Deliveries to")
    // The first attempt was refused (HTTP 500), the retry succeeded: both in the log.
    const until = Date.now() + 20_000
    while (Date.now() < until) {
      await page.click("button:text-is('Refresh')")
      await page.waitForTimeout(300)
      const log = (await page.textContent("#deliveries").catch(() => "")) ?? ""
      if (log.includes("HTTP 500") && log.includes("HTTP 200")) break
    }
    const log = (await page.textContent("#deliveries")) ?? ""
    expect(log).toContain("webhook.test")
    expect(log).toContain("HTTP 500")
    expect(log).toContain("HTTP 200")
    await axe("deliveries")
    await shot("deliveries")
    // Failures first-class: a filter for them (or, where the service cannot filter yet, a sentence saying so).
    await page.selectOption("#delivery-outcome", "failed")
    await page.waitForSelector("#deliveries")
    await waitForText(page, "#deliveries", "includes", "HTTP 500")
    // The unfiltered rows stay until the filtered list arrives.
    await page
      .waitForFunction(
        `!(document.querySelector("#deliveries")?.textContent ?? "").includes("HTTP 200")`,
        null,
        {
          timeout: 5_000
        }
      )
      .catch(() => undefined)
    expect((await page.textContent("#deliveries")) ?? "").not.toContain("HTTP 200")
    await page.selectOption("#delivery-outcome", "")
    await page.waitForSelector("#deliveries")
    // Redeliver the event: one more request reaches the receiver.
    const before = receiver.received.length
    await page.click("#deliveries button:text-is('Redeliver')")
    await waitForText(page, "main .notice", "startsWith", "Event evt_")
    const end = Date.now() + 15_000
    while (Date.now() < end && receiver.received.length === before)
      await new Promise((r) => setTimeout(r, 100))
    expect(receiver.received.length).toBeGreaterThan(before)
  }, 90_000)

  it("rotates a webhook secret as one guided flow", async () => {
    await open("#/webhooks", "Webhooks")
    await page.waitForSelector("#endpoints li")
    const before = await running.api.call<{ webhooks: Array<{ id: string; disabled_at: string | null }> }>(
      "GET",
      "/v1/webhooks"
    )
    await page.click("#endpoints li button:text-is('Rotate secret')")
    await page.click("button:text-is('Roll the secret')")
    await page.waitForSelector("#secret-grace")
    expect(await page.textContent("#endpoints .secret-value")).toMatch(/^whsec_/)
    expect(await page.textContent("#secret-grace")).toMatch(
      /^The previous secret keeps signing beside it until /
    )
    const grace = Date.parse((await page.getAttribute("#secret-grace time", "datetime")) ?? "")
    expect(Math.abs(grace - (Date.now() + 24 * 60 * 60_000))).toBeLessThan(5 * 60_000)
    // The same endpoints as before, all still active: no second endpoint was registered.
    const after = await running.api.call<{ webhooks: Array<{ id: string; disabled_at: string | null }> }>(
      "GET",
      "/v1/webhooks"
    )
    expect(after.body.webhooks).toEqual(before.body.webhooks)
    await axe("webhook rotation")
  }, 60_000)

  it("picks an endpoint's event types in the form, and opens a delivery to its event and answer", async () => {
    await open("#/webhooks", "Webhooks")
    const url = `https://${HOST}:${receiver.port}/picked`
    await page.fill("#webhook-url", url)
    // Every type by default; one type once "Only these" is chosen.
    expect(await page.isDisabled("input[name='new-webhook-type'][value='deposit_request.settled']")).toBe(
      true
    )
    await page.check("input[name='new-webhook-scope'][value='some']")
    await page.check("input[name='new-webhook-type'][value='deposit_request.settled']")
    await page.click("button:text-is('Add endpoint')")
    // An earlier endpoint's secret may still be shown: wait for this one's.
    await waitForText(page, "main", "includes", `Signing secret of ${url}`)
    const listed = await running.api.call<{
      webhooks: Array<{ id: string; url: string; enabled_events: Array<string> }>
    }>("GET", "/v1/webhooks")
    const endpoint = listed.body.webhooks.find((w) => w.url === url)
    expect(endpoint?.enabled_events).toEqual(["deposit_request.settled"])
    const row = `#endpoints li[data-id='${endpoint?.id}']`
    await waitForText(page, row, "includes", "Receives deposit_request.settled")
    await axe("webhook event types")

    // A test event goes to the endpoint named, whatever its filter; its delivery opens to what went over the wire.
    const before = receiver.received.length
    await page.click(`${row} button:text-is('Send a test event')`)
    await waitForText(page, row, "includes", "Test event evt_")
    await page.click(`${row} a`)
    await waitForText(page, "main h1", "startsWith", "Deliveries to")
    const until = Date.now() + 20_000
    while (Date.now() < until) {
      await page.click("button:text-is('Refresh')")
      await page.waitForTimeout(300)
      if (((await page.textContent("#deliveries").catch(() => "")) ?? "").includes("HTTP 200")) break
    }
    await page.click("#deliveries button:text-is('Details')")
    await page.waitForSelector("#attempt pre.wire[id^='event-']")
    const sent = receiver.received.slice(before).find((r) => r.url === "/picked")
    expect(sent).toBeDefined()
    // The event's JSON pretty-printed as text, exactly the bytes the receiver got; the answer it gave.
    expect(await page.textContent("#attempt pre.wire[id^='event-']")).toBe(
      JSON.stringify(JSON.parse(sent!.body.toString("utf8")), null, 2)
    )
    expect(await page.textContent("#attempt pre.wire[id^='answer-']")).toBe("ok")
    expect(await page.textContent("#attempt")).toContain(
      `service-signature: ${String(sent!.headers["service-signature"])}`
    )
    expect(await page.getAttribute("#deliveries button:text-is('Details')", "aria-expanded")).toBe("true")
    await axe("delivery detail")
    await shot("delivery-detail")
  }, 60_000)

  it("rotates the API key, showing the new key once and the previous key's grace", async () => {
    await open("#/developers", "Developers")
    await waitForText(page, "#key-info", "includes", "ending")
    await page.click("button:text-is('Rotate the key')")
    await page.waitForSelector("#grace")
    expect(await page.textContent(".secret-value")).toMatch(/^service_test_/)
    expect(await page.textContent("#grace")).toMatch(/^The previous key keeps working until /)
    const grace = Date.parse((await page.getAttribute("#grace time", "datetime")) ?? "")
    expect(Math.abs(grace - (Date.now() + 24 * 60 * 60_000))).toBeLessThan(5 * 60_000)
    await waitForText(page, "#previous-key", "includes", "keeps working until")
    // The test's own key is the previous one now, and still works.
    expect((await running.api.call("GET", "/v1/account")).status).toBe(200)
    await axe("developers")
    await shot("developers")
  }, 60_000)

  it("renders every other view with real data and no serious accessibility violation", async () => {
    await open("#/customers", "Customers")
    await page.fill("#new-customers-name", "Dana Buyer")
    await page.fill("#new-customers-email", "dana@example.com")
    await page.click("button:text-is('Add customer')")
    await waitForText(page, "#records", "includes", "Dana Buyer")
    await axe("customers")
    await shot("customers")
    await open("#/issuers", "Issuers")
    await waitForText(page, "#records", "includes", "Acme Books")
    await axe("issuers")
    await shot("issuers")
    await open("#/payout-addresses", "Payout addresses")
    await waitForText(page, "#records", "includes", "0x52908400098527886E0F7030069857D2E4169EE7")
    await axe("payout addresses")
    await shot("payout-addresses")
    await open("#/events", "Events")
    await waitForText(page, "#events", "includes", "deposit_request.settled")
    await axe("events")
    await shot("events")
    await open("#/reconciliation", "Reconciliation")
    await waitForText(page, "#differences-summary", "includes", "reconcile")
    await axe("reconciliation")
    await shot("reconciliation")
    // The CLI's session belongs to no member, and the account has none: every section loads, none refused.
    await open("#/team", "Team")
    await waitForText(page, "section[aria-labelledby=members-title]", "includes", "No members.")
    await waitForText(page, "section[aria-labelledby=own-title]", "includes", "belongs to no member")
    expect(await page.$$eval("main .refusal", (ps) => ps.map((p) => p.textContent))).toEqual([])
    await axe("team")
    await shot("team")
    // The README's picture: the requests list with every kind of request above, at a desktop width.
    await open("#/requests", "Requests")
    await waitForText(page, "#requests", "includes", "settled")
    await page.setViewportSize({ width: 1100, height: 760 })
    await page.screenshot({ path: join(artifacts, "dashboard-requests-wide.png") })
    await page.setViewportSize({ width: 360, height: 780 })
    // Only when asked: a test run must not rewrite a tracked file.
    if (process.env.UPDATE_SCREENSHOTS === "1")
      copyFileSync(
        join(artifacts, "dashboard-requests-wide.png"),
        join("src", "web", "dashboard", "screenshot.png")
      )
  }, 90_000)

  it("revokes the API key only after a confirmation", async () => {
    await open("#/developers", "Developers")
    await waitForText(page, "#key-info", "includes", "ending")
    await page.click("button:text-is('Revoke the key')")
    // Nothing happens until the second, explicit step.
    expect((await running.api.call("GET", "/v1/account")).status).toBe(200)
    await axe("revoke confirmation")
    await page.click("button:text-is('Revoke it')")
    await waitForText(page, "#key-info", "includes", "None: issue one for your integration.")
    // The previous key went with it (the test's own).
    expect((await running.api.call("GET", "/v1/account")).status).toBe(401)
  }, 60_000)

  it("takes a sign-in token from the fragment by POST, never in a URL, and logs out", async () => {
    await page.click("button:text-is('Log out')")
    await waitForText(page, "main h1", "equals", "Sign in to the dashboard")
    expect(await storedSession()).toBeNull()
    // Email sign-in: the API's answer, whatever it is, is what the screen says (the routes come with sign-in).
    await page.fill("#email", "owner@example.com")
    await page.click("button:text-is('Email me a code')")
    await page.waitForSelector(".signin .refusal, #code")
    const answer = await page.$(".signin .refusal")
    if (answer !== null) expect(await answer.textContent()).toMatch(/^[A-Z].*\.$/)
    await axe("sign in")
    await shot("sign-in")
    const secret = `tok_${randomUUID()}`
    await page.goto("about:blank")
    await page.goto(`${dashboard()}#sign-in=${secret}`)
    await page.waitForSelector(".signin .refusal")
    expect(new URL(page.url()).hash).toBe("")
    expect(watched.requested.filter((u) => u.includes(secret))).toEqual([])
    expect(watched.foreign).toEqual([])
    expect(watched.errors).toEqual([])
    const script = await (await fetch(`${dashboard()}assets/app.js`)).text()
    const css = await (await fetch(`${dashboard()}assets/app.css`)).text()
    const gz = (s: string) => gzipSync(s).length
    console.log(
      `dashboard weight: JavaScript ${gz(script)} B gzipped (budget 150 KB), CSS ${gz(css)} B gzipped`
    )
    expect(gz(script)).toBeLessThan(150 * 1024)
  }, 60_000)
})
