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
