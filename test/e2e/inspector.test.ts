import { randomUUID } from "node:crypto"
import { copyFileSync, mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import type { Browser, BrowserContext, Download, Page } from "playwright-core"
import type { Address } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AnyStateNode } from "xstate"
import { anvilDevAccount, DEV_ACCOUNT } from "../../infra/chain/Anvil"
import { depositRequestMachine } from "../../machines/DepositRequest"
import { type DepositRequestEvent, step as applyStep } from "../../machines/step"
import { typedData } from "../../services/payer/WalletAttestation"
import { launchChromium, waitForText, watchPage } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { type LocalChain, startLocalChain } from "../support/LocalChain"

/**
 * The lifecycle inspector in Debian's Chromium against the whole service (PostgreSQL, NATS, the local chain): the
 * drawn machine checked against the machine's own definition; a request paid in parts and then over followed live
 * from awaiting_payer to settled, the marked state moving within 500 ms of each commit (the commit's instant read
 * from the step history's row, the page's from a MutationObserver); its history replayed step by step, each
 * snapshot shown equal to the one persisted at that version and to the pure step of the one before; a request
 * paused by a treasury out of gas and resumed; the account's feed; the exports; axe, the CSP and nothing fetched
 * from another origin, at 360 px.
 */
const artifacts = join(process.cwd(), "test", ".artifacts")
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
const WITHIN_MS = 500

let local: LocalChain
let running: ChainService
let browser: Browser
let context: BrowserContext
let page: Page
let mining: ReturnType<typeof setInterval> | undefined
let refs: { issuerId: string; payoutAddressId: string }
let watched: ReturnType<typeof watchPage>

interface Step {
  version: number
  event: { type: string } & Record<string, unknown>
  at: string
  status_before: string | null
  status_after: string
  state_after: unknown
  transition: { source: string; targets: Array<string>; event: string; guard: string | null } | null
  emitted: { lifecycle: Array<string>; commands: Array<string> }
  snapshot_before: unknown
  snapshot_after: unknown
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  refs = await running.api.setup()
  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 360, height: 780 }, acceptDownloads: true })
  await context.addInitScript({ content: signedIn() })
  page = await context.newPage()
  watched = watchPage(page, running.service.baseUrl)
}, 120_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await local?.node.stop()
})

/** Signed in as the dashboard keeps a session (the tab's sessionStorage), with an expiry it need not refresh. */
const signedIn = () => {
  const session = JSON.stringify({
    token: running.merchant.sessionToken,
    expires_at: new Date(Date.now() + 29 * 24 * 60 * 60_000).toISOString()
  })
  return `try { sessionStorage.setItem("deposits.session", ${JSON.stringify(session)}) } catch {}`
}

const inspector = () => `${running.service.baseUrl}/dashboard/#/inspector`

/** No serious or critical accessibility violation, and nothing wider than the 360 px screen but scrolling regions. */
const axe = async (step: string) => {
  await page.evaluate(axeSource)
  const result = (await page.evaluate("axe.run()")) as {
    violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>
  }
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(bad.map((v) => `${step}: ${v.id} ${JSON.stringify(v.nodes.map((n) => n.target))}`)).toEqual([])
  const wide = await page.evaluate(
    `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 361 && !e.closest(".scroll")).map((e) => e.tagName + "." + e.className)`
  )
  expect([step, await page.evaluate("document.documentElement.scrollWidth"), wide]).toEqual([step, 360, []])
}

const shot = (name: string) =>
  page.screenshot({ path: join(artifacts, `inspector-${name}.png`), fullPage: true })

const open = async (route: string, heading: string) => {
  if (!page.url().startsWith(`${running.service.baseUrl}/dashboard/`))
    await page.goto(`${running.service.baseUrl}/dashboard/${route}`)
  else await page.evaluate(`location.hash = ${JSON.stringify(route)}`)
  await waitForText(page, "main h1", "equals", heading)
}

/** Every state node below the root and every transition, read from the machine itself. */
const definitionStates = (node: AnyStateNode): Array<AnyStateNode> =>
  Object.values(node.states).flatMap((s) => [s, ...definitionStates(s)])
const definitionTransitions = () =>
  definitionStates(depositRequestMachine.root).flatMap((s) =>
    [...s.transitions].flatMap(([event, ts]) =>
      ts.flatMap((t) =>
        (t.target ?? [s]).map((target) => ({
          source: s.path.join("."),
          event,
          guard: t.guard === undefined ? "" : typeof t.guard === "string" ? t.guard : String(t.guard),
          target: target.path.join("."),
          stays: t.target === undefined
        }))
      )
    )
  )

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

/** The payer proves a wallet (a real EIP-712 signature), which releases the one-time address. */
const attest = async (id: string, payer: ReturnType<typeof anvilDevAccount>) => {
  const statement = {
    depositRequest: id,
    wallet: payer.address,
    chainId: 10143,
    expiresAt: Math.floor(Date.now() / 1000) + 600
  }
  const res = await running.service.request(`/v1/payer/deposit-requests/${id}/wallet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      wallet: payer.address,
      chain_id: 10143,
      expires_at: statement.expiresAt,
      signature: await payer.signTypedData(typedData(statement))
    })
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { address: Address }).address
}

const stepsOf = async (id: string) => {
  const res = await running.api.call<{ data: Array<Step> }>(
    "GET",
    `/v1/deposit-requests/${id}/steps?after_version=0`
  )
  expect(res.status).toBe(200)
  return res.body.data
}

/** When each version committed, to the microsecond, as the step history's row holds it. */
const commitTimes = async (id: string) => {
  const rows = await running.db.query<{ version: string; at_ms: string }>(
    "select version, (extract(epoch from at) * 1000)::float8 as at_ms from deposit_request_steps where deposit_request_id = $1 order by version",
    [id.slice(3)]
  )
  return new Map(rows.rows.map((r) => [Number(r.version), Number(r.at_ms)]))
}

const until = async (what: string, check: () => Promise<boolean>, timeout = 60_000) => {
  const end = Date.now() + timeout
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`never: ${what}`)
}

const statusOf = async (id: string) =>
  (
    await running.api.call<{ status: string; received_base_units: string }>(
      "GET",
      `/v1/deposit-requests/${id}`
    )
  ).body

const saved = async (download: Download) => JSON.parse(readFileSync(await download.path(), "utf8")) as unknown

let paidId = ""

describe("the lifecycle inspector", () => {
  it("draws every state and every transition of the machine's definition, under a strict CSP", async () => {
    const res = await page.goto(inspector())
    const csp = res?.headers()["content-security-policy"] ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self';")
    expect(csp).toContain("style-src 'self';")
    expect(csp).toContain("connect-src 'self';")
    await waitForText(page, "main h1", "equals", "Inspector")
    await page.waitForSelector("svg#machine g.state")
    const states = definitionStates(depositRequestMachine.root)
    const drawnStates = await page.$$eval("svg#machine g.state", (gs) =>
      gs.map((g) => ({
        path: g.getAttribute("data-state"),
        type: g.getAttribute("data-type"),
        initial: g.getAttribute("data-initial"),
        text: g.textContent
      }))
    )
    expect(drawnStates.sort((a, b) => String(a.path).localeCompare(String(b.path)))).toEqual(
      states
        .map((s) => ({
          path: s.path.join("."),
          type: s.type,
          initial: s.parent?.initial?.target[0] === s ? "true" : "false",
          text: s.key
        }))
        .sort((a, b) => a.path.localeCompare(b.path))
    )
    // The initial state's dot and arrow.
    expect(
      await page.$$eval("svg#machine g.initial", (gs) => gs.map((g) => g.getAttribute("data-initial-of")))
    ).toEqual([`${depositRequestMachine.id}.${String(depositRequestMachine.config.initial)}`])
    const drawn = await page.$$eval("svg#machine g.transition", (gs) =>
      gs.map((g) => ({
        source: g.getAttribute("data-source"),
        event: g.getAttribute("data-event"),
        guard: g.getAttribute("data-guard"),
        target: g.getAttribute("data-target"),
        text: g.textContent,
        group: g.getAttribute("data-group"),
        path: g.querySelector("path")?.getAttribute("d") ?? ""
      }))
    )
    const expected = definitionTransitions()
    // In any order: the page draws grouped edges, and the one pointed at or taken, over the others.
    const byKey = (ts: Array<{ source: unknown; event: unknown; guard: unknown; target: unknown }>) =>
      ts.map(({ source, event, guard, target }) => JSON.stringify({ source, event, guard, target })).sort()
    expect(byKey(drawn)).toEqual(byKey(expected))
    for (const t of drawn) {
      // A grouped transition's label is a row of its group's list (the group's label names the event).
      if (t.group !== "") expect(t.text).toContain(t.guard === "" ? String(t.source) : `[${t.guard}]`)
      else expect(t.text?.replaceAll(" ", "")).toBe(`${t.event}${t.guard === "" ? "" : `[${t.guard}]`}`)
      expect(t.path).toMatch(/^M[\d.]+ [\d.]+( L[\d.]+ [\d.]+)+$/)
    }
    // The same in words: one row per transition.
    await page.click("summary:text-is('The transitions as a table')")
    expect(
      await page.$$eval("#transitions tbody tr", (rows) =>
        rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent))
      )
    ).toEqual(expected.map((t) => [t.source, t.event, t.guard, t.stays ? "(stays)" : t.target]))
    await axe("machine")
    await shot("machine")
  }, 90_000)

  it("follows a request paid in parts and then over from awaiting_payer to settled, within 500 ms of each commit", async () => {
    const payer = anvilDevAccount(5)
    const id = await createRequest("3.000000")
    paidId = id
    await open(`#/inspector/${id}`, `Inspector: ${id}`)
    await waitForText(page, "#inspector-status", "includes", "Live: step 1, in awaiting payer")
    expect(await page.getAttribute("svg#machine g.state[data-state=awaiting_payer]", "data-active")).toBe(
      "true"
    )
    // From here the page's own clock marks when each step appears and when the marked state moves.
    await page.evaluate(`(() => {
      const seen = window.__seen = { steps: {}, states: [] }
      const current = () => [...document.querySelectorAll("svg#machine g.state[data-active=true]")].map((g) => g.getAttribute("data-state")).join(",")
      let active = current()
      new MutationObserver(() => {
        const at = performance.timeOrigin + performance.now()
        for (const li of document.querySelectorAll("#steps li[data-version]")) {
          const v = li.getAttribute("data-version")
          if (seen.steps[v] === undefined) seen.steps[v] = at
        }
        const now = current()
        if (now !== active) { active = now; seen.states.push({ state: now, at }) }
      }).observe(document.body, { subtree: true, childList: true, attributes: true })
    })()`)
    const watched = Date.now()
    const address = await attest(id, payer)
    await local.mint(payer.address, 4_000_000n)
    await until("ready", async () => (await statusOf(id)).status === "ready")
    await local.pay(payer, address, 1_000_000n)
    await until("1 received", async () => (await statusOf(id)).received_base_units === "1000000")
    await local.pay(payer, address, 1_000_000n)
    await until("2 received", async () => (await statusOf(id)).received_base_units === "2000000")
    // Over: 4 in all for 3 asked; the extra 1 goes back after the settlement.
    await local.pay(payer, address, 2_000_000n)
    await until(
      "settled and the overpayment returned",
      async () => {
        const r = await running.api.call<{ recoveries: Array<unknown> }>(
          "GET",
          `/v1/deposit-requests/${id}/recoveries`
        )
        return (await statusOf(id)).status === "settled" && r.body.recoveries.length === 1
      },
      90_000
    )
    const steps = await stepsOf(id)
    const last = steps.at(-1)!
    await page.waitForSelector(`#steps li[data-version="${last.version}"]`, { timeout: 10_000 })
    expect(await page.getAttribute("svg#machine g.state[data-state=settled]", "data-active")).toBe("true")
    expect(steps.map((s) => s.event.type)).toEqual([
      "xstate.init",
      "payer.wallet_attested",
      "deposit.credited",
      "deposit.credited",
      "deposit.credited",
      "settlement.confirmed",
      "return.confirmed"
    ])
    const seen = (await page.evaluate("window.__seen")) as {
      steps: Record<string, number>
      states: Array<{ state: string; at: number }>
    }
    expect(seen.states.map((s) => s.state)).toEqual(["ready", "partially_deposited", "deposited", "settled"])
    const committed = await commitTimes(id)
    const lags: Array<string> = []
    for (const s of steps.filter((x) => x.version > 1)) {
      const at = committed.get(s.version)!
      expect(at).toBeGreaterThan(watched - 1_000)
      const shown = seen.steps[String(s.version)]!
      const lag = shown - at
      lags.push(`v${s.version} ${lag.toFixed(0)} ms`)
      expect(lag, `step ${s.version} shown`).toBeLessThan(WITHIN_MS)
      expect(lag).toBeGreaterThan(-50)
      if (s.status_before !== s.status_after) {
        const moved = seen.states.find((m) => m.state === s.status_after)!
        expect(moved.at - at, `${s.status_after} marked`).toBeLessThan(WITHIN_MS)
      }
    }
    console.log(`inspector: commit → page, ${lags.join(", ")}`)
    // The taken transition is highlighted: the return's, which stays in settled.
    expect(
      await page.$$eval("svg#machine g.transition[data-taken=true]", (gs) =>
        gs.map((g) => g.getAttribute("data-transition"))
      )
    ).toEqual(["settled:return.confirmed:0:0"])
    expect(await page.textContent("#step-emitted")).toContain("deposit_request.recovered_funds")
    await axe("live request")
    await shot("live")
    // The README's picture: the live request with the whole drawing fitted to a desktop width, at twice the
    // pixels so its labels stay legible.
    const wide = await browser.newContext({ viewport: { width: 1280, height: 1000 }, deviceScaleFactor: 2 })
    try {
      await wide.addInitScript({ content: signedIn() })
      const picture = await wide.newPage()
      await picture.goto(`${inspector()}/${id}`)
      await waitForText(picture, "#inspector-status", "startsWith", `Live: step ${last.version}, in settled`)
      await picture.click("#fit")
      await picture.screenshot({ path: join(artifacts, "inspector-live-wide.png") })
    } finally {
      await wide.close()
    }
    if (process.env.UPDATE_SCREENSHOTS === "1")
      copyFileSync(
        join(artifacts, "inspector-live-wide.png"),
        join("src", "web", "dashboard", "inspector.png")
      )
  }, 180_000)

  it("replays the history backwards and forwards, each snapshot the one persisted at its version", async () => {
    const steps = await stepsOf(paidId)
    await open(`#/inspector/${paidId}`, `Inspector: ${paidId}`)
    await page.waitForSelector(`#steps li[data-version="${steps.at(-1)!.version}"]`)
    await page.click("main h1")
    const shownStep = async () => {
      const version = Number(await page.getAttribute("#step-detail", "data-version"))
      return {
        version,
        after: JSON.parse((await page.textContent("#snapshot-after")) ?? "null") as unknown,
        before: JSON.parse((await page.textContent("#snapshot-before")) ?? "null") as unknown,
        active: await page.$$eval("svg#machine g.state[data-active=true]", (gs) =>
          gs.map((g) => g.getAttribute("data-state"))
        ),
        taken: await page.$$eval("svg#machine g.transition[data-taken=true]", (gs) =>
          gs.map((g) => `${g.getAttribute("data-event")}[${g.getAttribute("data-guard")}]`)
        ),
        guard: (await page.textContent("#step-guard")) ?? ""
      }
    }
    const check = async (expected: Step) => {
      await waitForText(page, "#step-title", "startsWith", `Step ${expected.version}:`)
      const shown = await shownStep()
      expect(shown.version).toBe(expected.version)
      expect(shown.after).toEqual(expected.snapshot_after)
      expect(shown.before).toEqual(expected.snapshot_before)
      expect(shown.active).toEqual([expected.status_after])
      expect(shown.guard).toBe(expected.transition?.guard ?? "—")
      expect(shown.taken).toEqual(
        expected.transition === null
          ? []
          : [`${expected.transition.event}[${expected.transition.guard ?? ""}]`]
      )
      // The machine's own pure step from the snapshot before, given the event, is the snapshot shown after.
      if (expected.version > 1)
        expect(
          JSON.parse(
            JSON.stringify(
              applyStep(expected.snapshot_before, expected.event as DepositRequestEvent).snapshot
            )
          )
        ).toEqual(shown.after)
    }
    const order: Array<number> = []
    // Backwards with ←, from the newest to the create.
    for (let i = steps.length - 1; i >= 0; i--) {
      await check(steps[i]!)
      order.push(steps[i]!.version)
      if (i > 0) await page.keyboard.press("ArrowLeft")
    }
    expect(await page.isDisabled("#step-back")).toBe(true)
    expect(await page.getAttribute("#inspector-status", "data-mode")).toBe("replay")
    // The create's snapshot is the one the first wallet step started from.
    expect(steps[1]!.snapshot_before).toEqual(steps[0]!.snapshot_after)
    await axe("replay")
    // Forwards with the button and →, back to live.
    await page.click("#step-forward")
    await check(steps[1]!)
    for (let i = 2; i < steps.length; i++) {
      await page.keyboard.press("ArrowRight")
      await check(steps[i]!)
    }
    await waitForText(page, "#inspector-status", "startsWith", "Live:")
    expect(order).toEqual(steps.map((s) => s.version).reverse())
    // Inside the drawing's scrolling region the arrows scroll it and leave the history where it is.
    await page.focus('section.scroll[aria-label="The lifecycle machine"]')
    await page.keyboard.press("ArrowLeft")
    await page.waitForTimeout(100)
    expect(await page.getAttribute("#inspector-status", "data-mode")).toBe("live")
    // The request's current snapshot is the last step's.
    const row = await running.db.query<{ snapshot: unknown }>(
      "select snapshot from deposit_requests where id = $1",
      [paidId.slice(3)]
    )
    expect(row.rows[0]?.snapshot).toEqual(steps.at(-1)!.snapshot_after)
  }, 90_000)

  it("shows a request paused by a treasury out of gas, and its resume", async () => {
    const payer = anvilDevAccount(6)
    const id = await createRequest("2.000000")
    const address = await attest(id, payer)
    await local.mint(payer.address, 2_000_000n)
    const treasury = anvilDevAccount(DEV_ACCOUNT.treasury).address
    const gas = await local.chain.getBalance({ address: treasury })
    await local.chain.setBalance({ address: treasury, value: 0n })
    try {
      await open(`#/inspector/${id}`, `Inspector: ${id}`)
      await local.pay(payer, address, 2_000_000n)
      await until("needs attention", async () => (await statusOf(id)).status === "needs_attention", 90_000)
      await waitForText(page, "#inspector-status", "includes", "needs attention", 10_000)
    } finally {
      await local.chain.setBalance({ address: treasury, value: gas })
    }
    const resumed = await running.service.request(`/v1/deposit-requests/${id}/resume`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${running.merchant.sessionToken}`,
        "content-type": "application/json"
      },
      body: "{}"
    })
    expect(resumed.status).toBe(200)
    await until("settled", async () => (await statusOf(id)).status === "settled", 90_000)
    await waitForText(page, "#inspector-status", "includes", "in settled", 10_000)
    const steps = await stepsOf(id)
    const pause = steps.find((s) => s.event.type === "attention.raised")!
    const resume = steps.find((s) => s.event.type === "operator.resumed")!
    expect(pause).toMatchObject({ status_before: "deposited", status_after: "needs_attention" })
    expect(resume).toMatchObject({ status_before: "needs_attention", status_after: "deposited" })
    expect(pause.event.code).toBe("treasury_out_of_gas")
    expect(await page.textContent("#steps")).toContain("attention.raised: deposited → needs attention")
    expect(await page.textContent("#steps")).toContain("operator.resumed: needs attention → deposited")
    // Replayed: the pause marks needs_attention and its transition; the resume names the guard that chose deposited.
    await page.click(`#steps li[data-version="${pause.version}"] button`)
    await waitForText(page, "#step-title", "startsWith", `Step ${pause.version}:`)
    expect(await page.getAttribute("svg#machine g.state[data-state=needs_attention]", "data-active")).toBe(
      "true"
    )
    expect(
      await page.$$eval("svg#machine g.transition[data-taken=true]", (gs) =>
        gs.map((g) => g.getAttribute("data-transition"))
      )
    ).toEqual(["deposited:attention.raised:0:0"])
    expect(await page.textContent("#step-emitted")).toContain("deposit_request.needs_attention")
    await page.click(`#steps li[data-version="${resume.version}"] button`)
    await waitForText(page, "#step-title", "startsWith", `Step ${resume.version}:`)
    expect(await page.textContent("#step-guard")).toBe(resume.transition?.guard ?? "")
    expect(resume.transition?.guard).toBeTruthy()
    expect(await page.getAttribute("svg#machine g.state[data-state=deposited]", "data-active")).toBe("true")
    expect(await page.textContent("#step-emitted")).toContain("command retry")
    await axe("paused and resumed")
    await shot("paused-resumed")
  }, 240_000)

  it("lists the account's steps as they commit, filtered by status, and follows one on a click", async () => {
    await open("#/inspector", "Inspector")
    await page.waitForSelector("#feed tbody tr")
    const fresh = await createRequest("1.000000")
    await page.waitForSelector(`#feed tr[data-id="${fresh}"]`, { timeout: 10_000 })
    await page.selectOption("#feed-status", "settled")
    // The settled request is in the unfiltered list too: the filter has applied once the fresh one is gone.
    await page.waitForSelector(`#feed tr[data-id="${fresh}"]`, { state: "detached", timeout: 10_000 })
    await page.waitForSelector(`#feed tr[data-id="${paidId}"]`, { timeout: 10_000 })
    const statuses = await page.$$eval("#feed tbody tr td:nth-child(4) .status:last-child", (ss) =>
      ss.map((s) => s.getAttribute("data-status"))
    )
    expect(statuses.length).toBeGreaterThan(0)
    expect(new Set(statuses)).toEqual(new Set(["settled"]))
    expect(await page.$(`#feed tr[data-id="${fresh}"]`)).toBeNull()
    await axe("feed")
    await shot("feed")
    await page.click(`#feed tr[data-id="${paidId}"] a`)
    await waitForText(page, "main h1", "equals", `Inspector: ${paidId}`)
  }, 60_000)

  it("exports the machine and a request's steps for Stately's tools, as the API serves them", async () => {
    await open(`#/inspector/${paidId}`, `Inspector: ${paidId}`)
    await page.waitForSelector("#steps li")
    const [machine] = await Promise.all([page.waitForEvent("download"), page.click("#export-machine")])
    expect(machine.suggestedFilename()).toBe("deposit-request-machine.json")
    const definition = await running.api.call("GET", "/v1/lifecycle/machine/definition")
    expect(definition.headers.get("content-disposition")).toContain("deposit-request-machine.json")
    expect(await saved(machine)).toEqual(definition.body)
    expect((definition.body as { id: string }).id).toBe(depositRequestMachine.id)
    const [steps] = await Promise.all([page.waitForEvent("download"), page.click("#export-steps")])
    expect(await saved(steps)).toEqual(
      (await running.api.call("GET", `/v1/deposit-requests/${paidId}/steps/stately`)).body
    )
    // A request that is not the account's is not found, here as everywhere, and the page says so once.
    const unknown = `dr_${randomUUID()}`
    const other = await running.service.request(`/v1/deposit-requests/${unknown}/steps`, {
      headers: { authorization: `Bearer ${running.merchant.apiKey}` }
    })
    expect(other.status).toBe(404)
    await open(`#/inspector/${unknown}`, `Inspector: ${unknown}`)
    await waitForText(
      page,
      "main .refusal",
      "equals",
      ((await other.json()) as { error: { message: string } }).error.message
    )
    const asked = watched.requested.filter((u) => u.includes(`${unknown}/steps`)).length
    await page.waitForTimeout(1_500)
    expect(watched.requested.filter((u) => u.includes(`${unknown}/steps`)).length).toBe(asked)
    expect(watched.foreign).toEqual([])
    expect(watched.errors).toEqual([])
    expect(watched.requested.some((u) => u.includes("/v1/lifecycle/machine"))).toBe(true)
  }, 60_000)
})
