import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { launchChromium } from "../support/Browser"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { readyRequest } from "../support/Payer"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { type ServiceProcess, spawnService, environmentWithout } from "../support/Process"
import { httpTarget } from "../support/Service"

// Issue 35, items 1 and 5: `npm start` in the sandbox says what to do next once its port is open, `GET /` leads
// somewhere, each lifecycle change is one line of the log, and a local receiver's refusal names the setting.

const dataDir = mkdtempSync(join(tmpdir(), "deposits-sandbox-start-"))
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
const inherited = environmentWithout([
  "DATABASE_URL",
  "NATS_URL",
  "CHAIN_RPC_URL",
  "CHAIN_RPC_URLS",
  "TOKEN_ADDRESS",
  "TREASURY_PRIVATE_KEY",
  "SERVICE_ENV",
  "SMTP_URL",
  "PUBLIC_BASE_URL",
  "WEBHOOKS_ALLOW_PRIVATE"
])

let chain: LocalChain
let database: { url: string; drop: () => Promise<void> }
let service: ServiceProcess

beforeAll(async () => {
  ;[chain, database] = await Promise.all([startLocalChain(), createTestDatabase()])
  service = await spawnService({
    ...inherited,
    DATABASE_URL: database.url,
    CHAIN_RPC_URL: chain.node.rpcUrl,
    TOKEN_ADDRESS: chain.token,
    DATA_DIR: dataDir,
    RATE_LIMIT_CAPACITY: "10000"
  })
}, 120_000)
afterAll(async () => {
  await service?.stop()
  await Promise.all([chain?.node.stop(), database?.drop()])
  rmSync(dataDir, { recursive: true, force: true })
})

/** The lines of the log that name this request's lifecycle, in order. */
const lifecycleLines = (id: string) =>
  service
    .output()
    .split("\n")
    .filter((line) => line.includes(`lifecycle ${id} `))
    .map((line) => line.slice(line.indexOf("lifecycle ")))

describe("npm start in the sandbox", () => {
  it("prints, after the port opens, where the docs, the CLI command, the checkout and the mail codes are", () => {
    const output = service.output()
    const listening = output.indexOf("Listening on")
    const banner = output.indexOf(`the sandbox is ready at ${service.baseUrl}`)
    expect(listening).toBeGreaterThan(-1)
    expect(banner).toBeGreaterThan(listening)
    const text = output.slice(banner)
    expect(text).toContain(`${service.baseUrl}/docs`)
    expect(text).toContain("npm run cli -- sandbox")
    expect(text).toContain(`${service.baseUrl}/checkout/dr_…`)
    expect(text).toContain("payer mail codes:                             logged here (no SMTP_URL set)")
    expect(text).toContain("restart with WEBHOOKS_ALLOW_PRIVATE=true")
    expect(text).toContain("one line per change (lifecycle dr_…)")
  })

  it("answers GET / with a page of same-origin links and the first steps, under a strict CSP", async () => {
    const res = await fetch(`${service.baseUrl}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
    // The dashboard's policy without its script: the stylesheet from this origin, nothing else.
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    const html = await res.text()
    // Issue 48: styled as the dashboard, with links to it, the docs and how a checkout comes about.
    expect(html).toContain('<link rel="stylesheet" href="/dashboard/assets/app.css">')
    for (const href of ["/dashboard/", "/docs", "/openapi.json", "/v1/health", "#checkout"])
      expect(html).toContain(`href="${href}"`)
    expect(html).toMatch(/id="checkout"[\s\S]*checkout_url[\s\S]*POST \/v1\/deposit-requests/)
    expect(html).toContain("npm run cli -- sandbox")
    // Every link stays on this origin (no scheme, no protocol-relative address) or on the page itself.
    const links = [...html.matchAll(/(?:href|src)="([^"]*)"/g)].map((m) => m[1]!)
    expect(links.length).toBeGreaterThan(0)
    for (const link of links) expect(link).toMatch(/^(\/[^/]|#[a-z])/)
    // Each link answers.
    for (const link of links.filter((l) => l.startsWith("/")))
      expect((await fetch(`${service.baseUrl}${link}`)).status).toBe(200)
  })

  it("shows GET / in Chromium with no request to another origin and no CSP violation", async () => {
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const requested: Array<string> = []
      const complaints: Array<string> = []
      page.on("request", (r) => requested.push(r.url()))
      page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning") complaints.push(m.text())
      })
      const violations: Array<string> = []
      await page.exposeFunction("reportViolation", (v: string) => violations.push(v))
      await page.addInitScript(
        "document.addEventListener('securitypolicyviolation', (e) => reportViolation(e.violatedDirective + ' ' + e.blockedURI))"
      )
      await page.setViewportSize({ width: 360, height: 780 })
      const res = await page.goto(`${service.baseUrl}/`)
      expect(res?.status()).toBe(200)
      expect(await page.textContent("h1")).toBe("Deposit requests (sandbox)")
      expect(await page.getAttribute("a[href='/docs']", "href")).toBe("/docs")
      expect(await page.getAttribute("a[href='/dashboard/']", "href")).toBe("/dashboard/")
      // The dashboard's stylesheet applied: its font and its sandbox badge.
      expect(await page.evaluate("getComputedStyle(document.body).fontFamily")).toMatch(/system-ui/)
      expect(await page.evaluate("getComputedStyle(document.querySelector('.env')).borderTopStyle")).toBe(
        "solid"
      )
      expect(requested).toContain(`${service.baseUrl}/dashboard/assets/app.css`)
      for (const url of requested) expect(new URL(url).origin).toBe(service.baseUrl)
      expect(complaints).toEqual([])
      expect(violations).toEqual([])
      // Accessible (axe-core: nothing serious or critical) and nothing wider than a 360 px screen.
      await page.evaluate(axeSource)
      const axe = (await page.evaluate("axe.run()")) as { violations: Array<{ id: string; impact: string }> }
      expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([])
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBe(360)
    } finally {
      await browser.close()
    }
  }, 60_000)

  it("refuses a receiver on this machine naming WEBHOOKS_ALLOW_PRIVATE and the restart it needs", async () => {
    const merchant = await createMerchant(database.url)
    const api = merchantClient(httpTarget(service.baseUrl), merchant)
    for (const url of ["http://127.0.0.1:4000/hooks", "https://localhost/hooks"]) {
      const res = await api.call<{ error: { code: string; message: string } }>("POST", "/v1/webhooks", {
        url
      })
      expect(res.status).toBe(400)
      expect(res.body.error.message).toMatch(/^'url' is not allowed: it must /)
      expect(res.body.error.message).toContain(
        "start the sandbox with WEBHOOKS_ALLOW_PRIVATE=true (read at start: restart the service after setting it)"
      )
    }
  })

  it("logs each lifecycle change of an overpaid request in one line: created, attested, paid, settled, excess returned", async () => {
    const merchant = await createMerchant(database.url)
    const running = httpTarget(service.baseUrl)
    const api = merchantClient(running, merchant)
    const payer = anvilDevAccount(5)
    const payout = privateKeyToAccount(generatePrivateKey()).address
    const { id, address } = await readyRequest({ service: running, api, payer }, "6.000000", payout)
    await chain.mint(payer.address, 8_000_000n)
    await chain.pay(payer, address, 8_000_000n)
    await chain
      .mineUntil(async () => {
        const view = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
        // The overpayment's return is the last change; the request stays settled.
        return view.body.status === "settled" && lifecycleLines(id).length >= 5 ? true : undefined
      }, 60_000)
      .catch((e) => {
        throw new Error(`${e}; the service printed:\n${service.output().slice(-6_000)}`)
      })

    const lines = lifecycleLines(id)
    expect(lines).toHaveLength(5)
    expect(lines[0]).toBe(`lifecycle ${id} created 6.000000 USDC → awaiting_payer`)
    expect(lines[1]).toBe(
      `lifecycle ${id} payer.wallet_attested wallet ${payer.address}, deposit address ${address} → ready; ` +
        "webhook deposit_request.ready"
    )
    expect(lines[2]).toBe(
      `lifecycle ${id} deposit.credited 8.000000 USDC from ${payer.address}; ` +
        "received 8.000000 of 6.000000, overpaid by 2.000000 → deposited; webhook deposit_request.deposited; " +
        "commands settle 6.000000 USDC"
    )
    expect(lines[3]).toMatch(
      new RegExp(
        `^lifecycle ${id} settlement\\.confirmed 6\\.000000 USDC to ${payout}, tx 0x[0-9a-f]{64} → settled; ` +
          "webhook deposit_request\\.settled; commands return 2\\.000000 USDC \\(overpayment\\)$"
      )
    )
    expect(lines[4]).toMatch(
      new RegExp(
        `^lifecycle ${id} return\\.confirmed 2\\.000000 USDC \\(overpayment\\), tx 0x[0-9a-f]{64} → settled; ` +
          "webhook deposit_request\\.recovered_funds$"
      )
    )
  }, 120_000)

  it("prints with `cli sandbox` a dashboard link that opens the same account once, its token never sent", async () => {
    // The CLI as the quickstart runs it: the service named by API alone.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["src/cli/deposits.mjs", "sandbox", "--json"],
      {
        env: { ...inherited, DATABASE_URL: database.url, API: service.baseUrl, PORT: "9" }
      }
    )
    const out = JSON.parse(stdout) as {
      account_id: string
      api_key: string
      session_token: string
      dashboard_url: string
    }
    const link = new URL(out.dashboard_url)
    expect(`${link.origin}${link.pathname}${link.search}`).toBe(`${service.baseUrl}/dashboard/`)
    expect(link.hash).toBe(`#session=${out.session_token}`)
    const byKey = (await (
      await fetch(`${service.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${out.api_key}` } })
    ).json()) as { id: string }
    expect(byKey.id).toBe(out.account_id)

    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const requested: Array<string> = []
      page.on("request", (r) => requested.push(`${r.url()} ${r.headers().authorization ?? ""}`))
      await page.goto(out.dashboard_url)
      await page.waitForSelector("button:text-is('Log out')", { timeout: 30_000 })
      // Taken off the address at once, and never in a URL the page requested.
      expect(new URL(page.url()).hash).not.toContain("session=")
      expect(requested.filter((r) => r.split(" ")[0]!.includes(out.session_token))).toEqual([])
      // Traded for a fresh session of the same account: the link's token has ended, so the link works once.
      const kept = JSON.parse(
        (await page.evaluate("sessionStorage.getItem('deposits.session')")) as string
      ) as { token: string }
      expect(kept.token).not.toBe(out.session_token)
      const asPage = (await (
        await fetch(`${service.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${kept.token}` } })
      ).json()) as { id: string }
      expect(asPage.id).toBe(out.account_id)
      const again = await fetch(`${service.baseUrl}/v1/account`, {
        headers: { authorization: `Bearer ${out.session_token}` }
      })
      expect(again.status).toBe(401)
    } finally {
      await browser.close()
    }
  }, 120_000)
})
