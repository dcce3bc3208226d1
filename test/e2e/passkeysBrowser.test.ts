import { buildSync } from "esbuild"
import { Effect, Option } from "effect"
import type { Browser } from "playwright-core"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../services/merchants/Accounts"
import { launchChromium } from "../support/Browser"
import { createMerchant } from "../support/Merchant"
import { freePort } from "../support/Process"
import { type RunningService, startService } from "../support/Service"

/**
 * Chromium's own WebAuthn, against the service: a CDP virtual authenticator (CTAP2, internal, resident keys, user
 * verified) makes and uses a passkey through @simplewebauthn/browser, on a page of the service's origin, which is
 * the dashboard's origin by default. `localhost` rather than 127.0.0.1: an rpID must be a domain, and localhost is
 * the one a browser treats as secure over plain HTTP.
 */

/** @simplewebauthn/browser as one script that leaves `SimpleWebAuthnBrowser` on the page. */
const browserLibrary = (): string =>
  buildSync({
    stdin: {
      contents: 'export { startAuthentication, startRegistration } from "@simplewebauthn/browser"',
      resolveDir: new URL("../..", import.meta.url).pathname
    },
    bundle: true,
    format: "iife",
    globalName: "SimpleWebAuthnBrowser",
    write: false,
    platform: "browser"
  }).outputFiles[0]!.text

// The page's side, run in Chromium: the library is on the page, the service on the same origin.
declare const SimpleWebAuthnBrowser: typeof import("@simplewebauthn/browser")
interface Started {
  readonly challenge_id: string
  readonly options: Parameters<typeof SimpleWebAuthnBrowser.startRegistration>[0]["optionsJSON"] &
    Parameters<typeof SimpleWebAuthnBrowser.startAuthentication>[0]["optionsJSON"]
}
interface Answer {
  readonly name: string
  readonly session_token: string
  readonly member: { readonly email: string; readonly passkeys: number }
}

let service: RunningService
let browser: Browser
let sessionToken: string
let email: string

beforeAll(async () => {
  const port = await freePort()
  service = await startService({
    config: { port, publicBaseUrl: Option.some(`http://localhost:${port}`) }
  })
  const merchant = await createMerchant(service.databaseUrl)
  const accountId = merchant.accountId.slice("acct_".length)
  email = `browser-${Date.now()}@example.test`
  const db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
  const member = await db.query<{ id: string }>(
    "insert into members (id, account_id, email, created_at) values (gen_random_uuid(), $1, $2, now()) returning id",
    [accountId, email]
  )
  await db.end()
  const memberId = member.rows[0]!.id
  sessionToken = (
    await service.runtime.runPromise(
      Effect.flatMap(Accounts, (accounts) => accounts.createSession(accountId, { memberId }))
    )
  ).token
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe("passkeys in Chromium", () => {
  it("registers a passkey with a virtual authenticator, then signs in with it", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`http://localhost:${new URL(service.baseUrl).port}/v1/health`)
    const cdp = await context.newCDPSession(page)
    await cdp.send("WebAuthn.enable")
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true
      }
    })
    await page.evaluate(browserLibrary())

    const registered = await page.evaluate(async (token) => {
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
      const started = (await (
        await fetch("/v1/account/passkeys/options", { method: "POST", headers, body: "{}" })
      ).json()) as Started
      const response = await SimpleWebAuthnBrowser.startRegistration({ optionsJSON: started.options })
      const res = await fetch("/v1/account/passkeys", {
        method: "POST",
        headers,
        body: JSON.stringify({ challenge_id: started.challenge_id, name: "Chromium", response })
      })
      return { status: res.status, body: (await res.json()) as Answer }
    }, sessionToken)
    expect(registered.status, JSON.stringify(registered.body)).toBe(201)
    expect(registered.body.name).toBe("Chromium")
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]!.isResidentCredential).toBe(true)
    expect(credentials[0]!.rpId).toBe("localhost")

    const signedIn = await page.evaluate(async () => {
      const headers = { "content-type": "application/json" }
      const started = (await (
        await fetch("/v1/sign-in/passkey/options", { method: "POST", headers, body: "{}" })
      ).json()) as Started
      const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: started.options })
      const res = await fetch("/v1/sign-in/passkey", {
        method: "POST",
        headers,
        body: JSON.stringify({ challenge_id: started.challenge_id, response })
      })
      const body = (await res.json()) as Answer
      const account = await fetch("/v1/account", {
        headers: { authorization: `Bearer ${body.session_token}` }
      })
      return { status: res.status, body, accountStatus: account.status }
    })
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(201)
    expect(signedIn.body.member.email).toBe(email)
    expect(signedIn.body.member.passkeys).toBe(1)
    expect(signedIn.accountStatus).toBe(200)
    // The authenticator counted the use, and the service kept its count.
    const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId })
    expect(after.credentials[0]!.signCount).toBeGreaterThan(0)
    await context.close()
  })

  it("on 127.0.0.1 the dashboard says passkeys need a name and links to localhost; on localhost it says nothing", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const port = new URL(service.baseUrl).port
    await page.goto(`http://127.0.0.1:${port}/dashboard/`)
    const note = page.locator("#passkeys-need-a-name")
    await note.waitFor({ timeout: 30_000 })
    expect(await note.textContent()).toContain("browsers refuse them on an address such as 127.0.0.1")
    expect(await note.locator("a").getAttribute("href")).toBe(`http://localhost:${port}/dashboard/`)
    expect(await page.isDisabled("button:text-is('Sign in with a passkey')")).toBe(true)
    // Followed, the link leads to a page where passkeys work: no note, the button on.
    await note.locator("a").click()
    await page.waitForURL(`http://localhost:${port}/dashboard/`)
    await page.waitForSelector("button:text-is('Sign in with a passkey')")
    expect(await page.isDisabled("button:text-is('Sign in with a passkey')")).toBe(false)
    expect(await page.$("#passkeys-need-a-name")).toBeNull()
    await context.close()
  })
})
