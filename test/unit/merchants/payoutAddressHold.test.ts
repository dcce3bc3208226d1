import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { payoutAddressHoldSeconds, releaseTime } from "../../../services/merchants/MerchantResources"
import { noticeMail } from "../../../services/merchants/SecurityNotices"

// The hold's setting and its notice (infra/decisions/0077-payout-address-hold.md).

const holdWith = (settings: Record<string, string>) =>
  Effect.runSync(
    Effect.withConfigProvider(
      payoutAddressHoldSeconds,
      ConfigProvider.fromMap(new Map(Object.entries(settings)))
    )
  )

describe("PAYOUT_ADDRESS_HOLD_SECONDS", () => {
  it("defaults to a day in production and none in the sandbox; a set value wins in both", () => {
    assert.strictEqual(holdWith({}), 0)
    assert.strictEqual(holdWith({ SERVICE_ENV: "sandbox" }), 0)
    assert.strictEqual(holdWith({ SERVICE_ENV: "production" }), 86_400)
    assert.strictEqual(holdWith({ SERVICE_ENV: "production", PAYOUT_ADDRESS_HOLD_SECONDS: "0" }), 0)
    assert.strictEqual(holdWith({ PAYOUT_ADDRESS_HOLD_SECONDS: "60" }), 60)
    assert.throws(() => holdWith({ PAYOUT_ADDRESS_HOLD_SECONDS: "-1" }))
  })

  it("releases on a whole second, never earlier than the hold; no hold is no release time", () => {
    const at = new Date("2026-11-25T12:00:00.250Z")
    assert.strictEqual(releaseTime(at, 86_400)?.toISOString(), "2026-11-26T12:00:01.000Z")
    assert.strictEqual(
      releaseTime(new Date("2026-11-25T12:00:00Z"), 5)?.toISOString(),
      "2026-11-25T12:00:05.000Z"
    )
    assert.isNull(releaseTime(at, 0))
  })
})

describe("the notice of a new payout address", () => {
  const entry = {
    id: "aud_1",
    accountId: "a",
    actor: { kind: "member" as const, id: "m", label: "ops@example.com" },
    action: "payout_address.created" as const,
    targetId: "pa_123",
    at: new Date("2026-11-25T12:00:00Z"),
    client: { address: "203.0.113.9", userAgent: null, requestId: null }
  }
  const link = (fragment: string) => `https://dash.example/dashboard/#${fragment}`

  it("says when it is released and links to its cancel", () => {
    const mail = noticeMail(entry, "Acme", link, new Date("2026-11-26T12:00:00Z"))!
    assert.include(mail.text, "until 2026-11-26T12:00:00.000Z")
    assert.include(mail.text, "https://dash.example/dashboard/#/payout-addresses/pa_123")
    assert.include(mail.text, "POST /v1/payout-addresses/pa_123/cancel")
  })

  it("says nothing of a hold when there is none", () => {
    assert.notInclude(noticeMail(entry, "Acme", link)!.text, "cancel")
  })
})
