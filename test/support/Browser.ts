import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { type Browser, chromium, type Page } from "playwright-core"

/** Debian's Chromium, headless, as the guide sets it up (no tool ever downloads a browser). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/**
 * Waits until `test` holds for the text (or tone) of `selector`, read from the test process every 5 ms: the page's
 * strict CSP forbids the string evaluation Playwright's in-page polling would need.
 */
export const waitForText = async (
  page: Page,
  selector: string,
  test: "equals" | "startsWith" | "includes" | "error",
  text = "",
  timeout = 30_000
) => {
  const until = Date.now() + timeout
  let got: string | null = null
  while (Date.now() < until) {
    const node = await page.$(selector)
    if (test === "error") {
      if ((await node?.getAttribute("data-tone")) === "error") return
    } else {
      got = (await node?.textContent()) ?? ""
      if (
        test === "equals" ? got === text : test === "startsWith" ? got.startsWith(text) : got.includes(text)
      )
        return
    }
    await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`${selector} never ${test} ${JSON.stringify(text)} (last: ${JSON.stringify(got)})`)
}

/**
 * What a page does that a test holds it to: every URL it requests, those outside `origin` (blob: URLs are the
 * page's own downloads), and every uncaught error, filled as the page runs.
 */
export const watchPage = (page: Page, origin: string) => {
  const watched = {
    requested: [] as Array<string>,
    foreign: [] as Array<string>,
    errors: [] as Array<string>
  }
  page.on("request", (r) => {
    watched.requested.push(r.url())
    if (!r.url().startsWith(origin) && !r.url().startsWith("blob:")) watched.foreign.push(r.url())
  })
  page.on("pageerror", (e) => watched.errors.push(e.message))
  return watched
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/**
 * The page's serious and critical accessibility violations (axe), in the light and in the dark colour scheme, each
 * as `step (scheme): rule targets`; the page is left in the light scheme.
 */
export const seriousViolationsInBothSchemes = async (page: Page, step: string) => {
  const found: Array<string> = []
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme })
    await page.evaluate(axeSource)
    const result = (await page.evaluate("axe.run()")) as {
      violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>
    }
    for (const v of result.violations)
      if (v.impact === "serious" || v.impact === "critical")
        found.push(`${step} (${colorScheme}): ${v.id} ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
  }
  await page.emulateMedia({ colorScheme: "light" })
  return found
}
