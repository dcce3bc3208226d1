import { randomUUID } from "node:crypto"
import type { Browser, BrowserContext, Page } from "playwright-core"
import type { Address } from "viem"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import type { DepositRequestEvent } from "../../machines/step"
import { ActorHost } from "../../services/actors/ActorHost"
import { typedData } from "../../services/payer/WalletAttestation"
import { launchChromium, seriousViolationsInBothSchemes, waitForText, watchPage } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../support/HttpsReceiver"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { createMerchant } from "../support/Merchant"
import { merchantClient } from "../support/Api"

/**
 * The inspector as an engineer debugs with it (issue 49), in Debian's Chromium against the whole service on a local
 * chain, at a desktop's size: the drawing readable as it first shows (every label at 11 px or more on screen), the
 * many alike edges grouped, zoom and pan by buttons, wheel, drag and keys, an edge brought forward by pointing or
 * focus; a request paid over, found from its event's id and from its transactions' hashes, its settlement step's
 * diff one removal (the settle) and one addition (the return); its webhook delivery and its step linked both ways;
 * the time axis; a pause jumped to; "copy as a test"; axe in both schemes and not one CSP refusal throughout.
 */
const HOST = "hooks.example.test"
const tls = makeCertificates(HOST)

let local: LocalChain
let running: ChainService
let browser: Browser
let context: BrowserContext
let page: Page
let mining: ReturnType<typeof setInterval> | undefined
let receiver: Awaited<ReturnType<typeof startReceiver>>
let refs: { issuerId: string; payoutAddressId: string }
let watched: ReturnType<typeof watchPage>

beforeAll(async () => {
  local = await startLocalChain()
  receiver = await startReceiver(tls)
  running = await startChainService(local, {
    mineWhileWaiting: true,
    service: { webhookNetwork: localReceiverNetwork(HOST, tls.ca) }
  })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  refs = await running.api.setup()
  const hook = await running.api.call("POST", "/v1/webhooks", {
    url: `https://${HOST}:${receiver.port}/hooks`
  })
  expect(hook.status, JSON.stringify(hook.body)).toBe(201)
  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: running.service.baseUrl })
  const session = JSON.stringify({
    token: running.merchant.sessionToken,
    expires_at: new Date(Date.now() + 29 * 24 * 60 * 60_000).toISOString()
  })
  // Every CSP refusal the page meets, kept where the test reads it.
  await context.addInitScript({
    content: `try { sessionStorage.setItem("deposits.session", ${JSON.stringify(session)}) } catch {}
      window.__refused = []
      document.addEventListener("securitypolicyviolation", (e) => window.__refused.push(e.violatedDirective + " " + e.blockedURI))`
  })
  page = await context.newPage()
  watched = watchPage(page, running.service.baseUrl)
}, 120_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await receiver?.close()
  await local?.node.stop()
})

const inspector = () => `${running.service.baseUrl}/dashboard/#/inspector`

const until = async (what: string, check: () => Promise<boolean>, timeout = 90_000) => {
  const end = Date.now() + timeout
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`never: ${what}`)
}

/** Each visible label's font size on screen: its CSS size times the drawing's scale. */
const labelSizes = () =>
  page.evaluate(`(() => {
    const svg = document.querySelector("svg#machine")
    const scale = svg.getScreenCTM().a
    return [...svg.querySelectorAll("g.transition g.edge-label[visibility=visible] text, g.group-label text, g.state text")]
      .map((t) => ({ text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale }))
  })()`) as Promise<Array<{ text: string; px: number }>>

const viewBox = async () => ((await page.getAttribute("svg#machine", "viewBox")) ?? "").split(" ").map(Number)
const zoom = async () => Number(await page.getAttribute("svg#machine", "data-zoom"))

/** The payer proves a wallet (a real EIP-712 signature), which releases the one-time address. */
const attest = async (id: string, payer: ReturnType<typeof anvilDevAccount>) => {
  const expiresAt = Math.floor(Date.now() / 1000) + 600
  const attested = await running.service.request(`/v1/payer/deposit-requests/${id}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      wallet: payer.address,
      chain_id: 10143,
      expires_at: expiresAt,
      signature: await payer.signTypedData(
        typedData({ depositRequest: id, wallet: payer.address, chainId: 10143, expiresAt })
      )
    })
  })
  expect(attested.status).toBe(200)
  return ((await attested.json()) as { address: Address }).address
}

const createRequest = async (amount: string) => {
  const made = await running.api.call<{ id: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body.id
}

/** An event given to the service's own actor host, as the treasury or an operator would send it. */
const apply = (id: string, event: DepositRequestEvent) =>
  running.service.runtime.runPromise(
    Effect.flatMap(ActorHost, (host) => host.apply(id.slice(3), `${event.type}-${randomUUID()}`, event))
  )

const refused = () => page.evaluate("window.__refused") as Promise<Array<string>>

describe("the inspector for debugging", () => {
  it("reads at the default size: labels of 11 px or more, the alike edges grouped, zoom, pan and hover", async () => {
    const res = await page.goto(inspector())
    expect(res?.headers()["content-security-policy"]).toContain("style-src 'self';")
    await waitForText(page, "main h1", "equals", "Inspector")
    await page.waitForSelector("svg#machine g.transition")
    expect(await zoom()).toBe(1)
    const sizes = await labelSizes()
    expect(sizes.length).toBeGreaterThan(20)
    expect(sizes.filter((s) => s.px < 11)).toEqual([])
    // attention.raised from 6 states into needs_attention, operator.resumed out of it by 10 guards: one edge each.
    const groups = await page.$$eval("svg#machine g.group", (gs) =>
      gs.map((g) => `${g.querySelector(".event")?.textContent} ${g.getAttribute("data-members")}`)
    )
    expect(groups.sort()).toEqual(["attention.raised ×6 6", "operator.resumed ×10 10"])
    const resumed = "svg#machine g.group[data-group*='operator.resumed'] g.group-label"
    expect(
      await page.$$eval(
        "g.transition[data-event='operator.resumed'] g.edge-label[visibility=visible]",
        (g) => g.length
      )
    ).toBe(0)
    // Opened from the keyboard (its label is a button), and closed again.
    await page.focus(resumed)
    await page.keyboard.press("Enter")
    expect(await page.getAttribute("svg#machine g.group[data-group*='operator.resumed']", "data-open")).toBe(
      "true"
    )
    expect(
      await page.$$eval(
        "g.transition[data-event='operator.resumed'] g.edge-label[visibility=visible]",
        (g) => g.length
      )
    ).toBe(10)
    expect((await labelSizes()).filter((s) => s.px < 11)).toEqual([])
    await page.keyboard.press("Enter")
    expect(await page.getAttribute("svg#machine g.group[data-group*='operator.resumed']", "data-open")).toBe(
      "false"
    )

    // Zoom by the buttons, the keys and the wheel; pan by drag and by the keys.
    await page.click("#zoom-in")
    expect(await zoom()).toBeCloseTo(1.25, 5)
    await page.click("#zoom-out")
    expect(await zoom()).toBeCloseTo(1, 5)
    await page.focus("section.drawing")
    await page.keyboard.press("+")
    expect(await zoom()).toBeCloseTo(1.25, 5)
    await page.keyboard.press("0")
    expect(await zoom()).toBe(1)
    const [x0, y0] = await viewBox()
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowDown")
    const [x1, y1] = await viewBox()
    expect([x1! - x0!, y1! - y0!]).toEqual([80, 80])
    const box = (await page.$("section.drawing"))!
    const at = (await box.boundingBox())!
    await page.mouse.move(at.x + 200, at.y + 200)
    await page.mouse.wheel(0, -300)
    await until("the wheel zoomed in", async () => (await zoom()) > 1, 5_000)
    await page.click("#zoom-reset")
    const [x2, y2] = await viewBox()
    await page.mouse.move(at.x + 300, at.y + 300)
    await page.mouse.down()
    await page.mouse.move(at.x + 250, at.y + 260, { steps: 5 })
    await page.mouse.up()
    const [x3, y3] = await viewBox()
    expect([Math.round(x3! - x2!), Math.round(y3! - y2!)]).toEqual([50, 40])

    // Pointing at an edge marks it and its label and draws them over the others; focus does the same.
    const edge = "svg#machine g.transition[data-transition='ready:deposit.credited:0:0']"
    await page.hover(`${edge} rect.label`, { force: true })
    expect(await page.getAttribute(edge, "class")).toContain("hot")
    const last = await page.$$eval("svg#machine g.transition", (gs) =>
      gs.at(-1)?.getAttribute("data-transition")
    )
    expect(last).toBe("ready:deposit.credited:0:0")
    const stroke = await page.evaluate(
      `getComputedStyle(document.querySelector(${JSON.stringify(`${edge} path`)})).strokeWidth`
    )
    expect(stroke).toBe("3px")
    await page.mouse.move(at.x + 5, at.y + 5)
    await page.focus("svg#machine g.transition[data-transition='deposited:settlement.confirmed:0:0']")
    expect(
      await page.getAttribute(
        "svg#machine g.transition[data-transition='deposited:settlement.confirmed:0:0']",
        "class"
      )
    ).toContain("hot")
    expect(await seriousViolationsInBothSchemes(page, "machine")).toEqual([])
    expect(await refused()).toEqual([])
  }, 120_000)

  let paid = ""
  let steps: Array<{
    version: number
    event: { type: string } & Record<string, unknown>
    status_after: string
  }> = []

  it("finds a request paid over by its event's id and by its transactions' hashes, and shows the settle then the return", async () => {
    const payer = anvilDevAccount(6)
    paid = await createRequest("3.000000")
    const address = await attest(paid, payer)
    await local.mint(payer.address, 4_000_000n)
    await local.pay(payer, address, 4_000_000n)
    await until("settled and the excess returned", async () => {
      const r = await running.api.call<{ recoveries: Array<unknown> }>(
        "GET",
        `/v1/deposit-requests/${paid}/recoveries`
      )
      return r.body.recoveries.length === 1
    })
    const history = await running.api.call<{ data: typeof steps }>(
      "GET",
      `/v1/deposit-requests/${paid}/steps`
    )
    steps = history.body.data
    const settlement = steps.find((s) => s.event.type === "settlement.confirmed")!
    const credit = steps.find((s) => s.event.type === "deposit.credited")!
    // The event's id as stored (and as webhooks deliver it).
    const stored = await running.db.query<{ id: string }>(
      "select id from lifecycle_events where deposit_request_id = $1 and type = 'deposit_request.settled'",
      [paid.slice(3)]
    )
    const settled = { id: `evt_${stored.rows[0]!.id}` }

    const search = async (q: string, version: number) => {
      await page.goto(inspector())
      await waitForText(page, "main h1", "equals", "Inspector")
      await page.fill("#find-q", q)
      await page.click("#find-step button[type=submit]")
      await waitForText(page, "main h1", "equals", `Inspector: ${paid}`)
      await waitForText(page, "#step-title", "startsWith", `Step ${version}:`)
      expect(page.url()).toContain(`#/inspector/${paid}/${version}`)
    }
    // The event: the step that emitted it, which lists it.
    await search(settled.id, settlement.version)
    expect(await page.textContent("#step-events")).toContain(settled.id)
    // The settlement's transaction hash, and the credit's.
    await search(String(settlement.event.tx_hash), settlement.version)
    const creditHash = String(credit.event.credit_id).split(":")[1]!
    await search(creditHash, credit.version)
    await search(String(credit.event.credit_id), credit.version)
    // Another account's event is not found.
    const other = merchantClient(running.service, await createMerchant(running.service.databaseUrl))
    const elsewhere = await other.call<{ error: { code: string } }>(
      "GET",
      `/v1/lifecycle/steps/find?q=${encodeURIComponent(settled.id)}`
    )
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, "event_not_found"])

    // The settlement's diff: the settle command removed, the return of the excess added, nothing "changed" in it.
    await search(settled.id, settlement.version)
    const pending = await page.$$eval("#context-changes tbody tr", (rows) =>
      rows
        .filter((r) => (r.getAttribute("data-path") ?? "").startsWith("pending"))
        .map((r) => `${r.getAttribute("data-change")} ${r.getAttribute("data-path")}`)
    )
    expect(pending).toEqual([
      `removed pending[command_id=settle:${paid}]`,
      expect.stringMatching(/^added pending\[command_id=return:/)
    ])
    expect(await page.textContent("#context-changes")).toContain("− removed")
    expect(await seriousViolationsInBothSchemes(page, "step")).toEqual([])
    expect(await refused()).toEqual([])
  }, 180_000)

  it("links a webhook delivery and the step that emitted its event both ways", async () => {
    const settled = async () =>
      (
        await running.api.call<{
          deliveries: Array<{ id: string; event_id: string; event_type: string; webhook_id: string }>
        }>("GET", `/v1/deposit-requests/${paid}/deliveries`)
      ).body.deliveries.find((d) => d.event_type === "deposit_request.settled")
    await until("the settled event delivered", async () => (await settled()) !== undefined, 30_000)
    const delivery = (await settled())!
    // From the request's deliveries to the step.
    await page.goto(`${running.service.baseUrl}/dashboard/#/requests/${paid}`)
    await page.click(`a.step-link[href='#/inspector/${delivery.event_id}']`)
    const settlement = steps.find((s) => s.event.type === "settlement.confirmed")!
    await waitForText(page, "#step-title", "startsWith", `Step ${settlement.version}:`)
    // From the step to the delivery's endpoint log, where the delivery's detail links back.
    await page.click(`#step-events a.delivery-link[data-delivery='${delivery.id}']`)
    await waitForText(page, "main h1", "startsWith", "Deliveries to")
    await page.click(`button[aria-label='Details of attempt 1 of ${delivery.event_id}']`)
    await page.click(`a.step-link[href='#/inspector/${delivery.event_id}']`)
    await waitForText(page, "#step-title", "startsWith", `Step ${settlement.version}:`)
    expect(await refused()).toEqual([])
  }, 90_000)

  it("shows the time axis, jumps to the step that paused a request, and copies the steps as a test", async () => {
    // A pause, raised as the treasury raises one when it runs out of gas, then an operator's resume.
    const id = await createRequest("1.000000")
    await page.goto(`${inspector()}/${id}`)
    await waitForText(page, "#inspector-status", "startsWith", "Live: step 1")
    expect(await page.isDisabled("#step-pause")).toBe(true)
    expect(await page.$$eval("#timeline g.tick", (g) => g.length)).toBe(1)
    await attest(id, anvilDevAccount(7))
    const now = () => new Date().toISOString()
    await apply(id, {
      type: "attention.raised",
      at: now(),
      code: "treasury_out_of_gas",
      message: "The treasury cannot pay for gas.",
      resolution: "Fund the treasury, then resume."
    })
    await apply(id, { type: "operator.resumed", at: now() })
    await waitForText(page, "#inspector-status", "startsWith", "Live: step 4, in ready")
    expect(
      await page.$$eval("#timeline g.tick.paused", (g) => g.map((t) => t.getAttribute("data-version")))
    ).toEqual(["3"])
    await page.click("#step-pause")
    await waitForText(page, "#step-title", "startsWith", "Step 3: attention.raised")
    expect(await page.textContent("#step-status")).toContain("needs attention")

    await page.goto(`${inspector()}/${paid}`)
    await waitForText(page, "#inspector-status", "startsWith", `Live: step ${steps.at(-1)!.version}`)
    expect(
      await page.$$eval("#timeline g.tick", (g) => g.map((t) => Number(t.getAttribute("data-version"))))
    ).toEqual(steps.map((s) => s.version))
    await page.click(`#timeline g.tick[data-version='2']`)
    await waitForText(page, "#step-title", "startsWith", "Step 2:")
    await page.click("#copy-test")
    await page.waitForSelector("#as-test")
    const source = (await page.textContent("#as-test")) ?? ""
    expect(source).toContain('from "@effect/vitest"')
    expect(source).toContain(`describe("${paid} replayed through the machine"`)
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(source)
    expect(await refused()).toEqual([])
    expect(watched.errors).toEqual([])
    expect(watched.foreign).toEqual([])
  }, 90_000)
})
