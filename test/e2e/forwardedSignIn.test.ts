import { Option } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, waitForText } from "../support/Browser"
import { type RunningService, startService } from "../support/Service"
import { startSmtpInbox } from "../support/SmtpInbox"

/**
 * Issue 46, login CSRF (infra/decisions/0074-sign-in-codes-and-forwarded-links.md), in Debian's Chromium against
 * the sandbox service mailing through a real SMTP inbox: a sign-in link asked for in one browser context and
 * opened in another signs nobody in until a page naming the account, the address and who asked is confirmed; in the
 * browser that asked, it signs in at once; an invitation is accepted only after a page naming the account and the
 * inviter.
 */
const OWNER = "owner@forward.example.com"
const COLLEAGUE = "colleague@elsewhere.example.org"
const ACCOUNT = "forward.example.com"

let smtp: Awaited<ReturnType<typeof startSmtpInbox>>
let service: RunningService
let browser: Browser
const contexts: Array<BrowserContext> = []

beforeAll(async () => {
  smtp = await startSmtpInbox()
  service = await startService({ config: { smtpUrl: Option.some(smtp.url) } })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await service?.stop()
  await smtp?.close()
})

/** A browser of its own: no storage shared with any other. */
const freshBrowser = async () => {
  const context = await browser.newContext({ viewport: { width: 360, height: 780 } })
  contexts.push(context)
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(e.message))
  return { context, page, errors }
}

/** How many entries the page's sessionStorage holds (the dashboard keeps its session there). The node typecheck has no DOM. */
const storedEntries = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length)

const dashboard = () => `${service.baseUrl}/dashboard/`

const decoded = (raw: string) =>
  raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))

const mailsTo = (to: string) => smtp.inbox.filter((m) => m.to === to).map((m) => decoded(m.raw))

/** The n-th mail to `to` (1-based), once it arrived. */
const nthMail = async (to: string, n: number) => {
  const until = Date.now() + 10_000
  for (;;) {
    const mails = mailsTo(to)
    if (mails.length >= n) return mails[n - 1]!
    if (Date.now() > until) throw new Error(`mail ${n} to ${to} never arrived (${mails.length} did)`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const linkIn = (mail: string, kind: "sign-in" | "invite") =>
  new RegExp(`(http://\\S+/dashboard/#${kind}=[A-Za-z0-9_-]+)`).exec(mail)?.[1] ??
  expect.fail(`no ${kind} link`)

const post = async <T>(path: string, body: unknown, token?: string) => {
  const res = await service.request(path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: (await res.json()) as T }
}

/** Asks for a code on the dashboard's sign-in page and answers the link of the mail it sent. */
const askForLink = async (page: Page, email: string) => {
  const before = mailsTo(email).length
  await page.goto(dashboard())
  await waitForText(page, "main h1", "equals", "Sign in to the dashboard")
  await page.fill("#email", email)
  await page.click("button:text-is('Email me a code')")
  await page.waitForSelector("#code")
  return linkIn(await nthMail(email, before + 1), "sign-in")
}

describe("sign-in that a forwarded link cannot hijack", () => {
  it("a link opened in another browser signs in only after a page naming the account and who asked", async () => {
    // The owner's account exists (sign-up by code through the API, with its binding).
    const started = await post<{ binding: string }>("/v1/sign-in/email", { email: OWNER })
    const code = /sign-in code is (\d{6})/.exec(await nthMail(OWNER, 1))?.[1] ?? expect.fail("no code")
    const owner = await post<{ account: { name: string } }>("/v1/sign-in/email/verify", {
      email: OWNER,
      code,
      binding: started.body.binding
    })
    expect(owner.status).toBe(201)
    expect(owner.body.account.name).toBe(ACCOUNT)

    const asking = await freshBrowser()
    const link = await askForLink(asking.page, OWNER)

    // Forwarded: another browser gets the question, not a session.
    const other = await freshBrowser()
    await other.page.goto(link)
    await waitForText(other.page, "#confirm-sign-in h1", "equals", `Sign in as ${OWNER}?`)
    expect(await other.page.textContent("#confirm-sign-in [data-account]")).toBe(ACCOUNT)
    expect(await other.page.textContent("#confirm-sign-in [data-email]")).toBe(OWNER)
    expect(await other.page.textContent("#confirm-sign-in [data-requested]")).toContain(
      "asked for in another browser"
    )
    expect(await storedEntries(other.page)).toBe(0)
    await other.page.click("#confirm-sign-in button:text-is('Cancel')")
    await waitForText(
      other.page,
      ".signin .refusal",
      "equals",
      "Nothing happened: the link was not confirmed."
    )
    await waitForText(other.page, "main h1", "equals", "Sign in to the dashboard")
    expect(await storedEntries(other.page)).toBe(0)

    // Declined, the link stays unused: confirmed, it signs in.
    await other.page.goto("about:blank")
    await other.page.goto(link)
    await waitForText(other.page, "#confirm-sign-in h1", "equals", `Sign in as ${OWNER}?`)
    await other.page.click("#confirm-sign-in button:text-is('Sign in to this account')")
    await waitForText(other.page, "main h1", "equals", "Overview")

    // In the browser that asked, a link signs in at once (a new tab shares the binding).
    const again = await askForLink(asking.page, OWNER)
    const tab = await asking.context.newPage()
    await tab.goto(again)
    await waitForText(tab, "main h1", "equals", "Overview")
    expect(await tab.$("#confirm-sign-in")).toBeNull()
    expect([...asking.errors, ...other.errors]).toEqual([])
  }, 60_000)

  it("an invitation is accepted only after a page naming the account and the inviter", async () => {
    const started = await post<{ binding: string }>("/v1/sign-in/email", { email: OWNER })
    const code =
      /sign-in code is (\d{6})/.exec(await nthMail(OWNER, mailsTo(OWNER).length + 1))?.[1] ??
      expect.fail("no code")
    const owner = await post<{ session_token: string }>("/v1/sign-in/email/verify", {
      email: OWNER,
      code,
      binding: started.body.binding
    })
    expect(owner.status).toBe(201)
    const invited = await post("/v1/account/invites", { email: COLLEAGUE }, owner.body.session_token)
    expect(invited.status).toBe(201)
    const link = linkIn(await nthMail(COLLEAGUE, 1), "invite")

    const colleague = await freshBrowser()
    await colleague.page.goto(link)
    await waitForText(colleague.page, "#confirm-sign-in h1", "equals", `Join ${ACCOUNT}?`)
    expect(await colleague.page.textContent("#confirm-sign-in [data-inviter]")).toBe(OWNER)
    expect(await colleague.page.textContent("#confirm-sign-in [data-account]")).toBe(ACCOUNT)
    expect(await colleague.page.textContent("#confirm-sign-in [data-email]")).toBe(COLLEAGUE)
    expect(await storedEntries(colleague.page)).toBe(0)
    // Nobody joined yet.
    const members = await service.request("/v1/account/members", {
      headers: { authorization: `Bearer ${owner.body.session_token}` }
    })
    expect(((await members.json()) as { members: Array<unknown> }).members.length).toBe(1)
    await colleague.page.click(`#confirm-sign-in button:text-is('Join ${ACCOUNT}')`)
    await waitForText(colleague.page, "main h1", "equals", "Overview")
    expect(colleague.errors).toEqual([])
  }, 60_000)
})
