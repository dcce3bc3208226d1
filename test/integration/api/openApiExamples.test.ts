import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Event } from "../../../src/http/Events/Api"
import { localReceiverNetwork, makeCertificates } from "../../support/HttpsReceiver"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 35, item 3: every example in the OpenAPI description works when pasted. Each operation with a request
 * body is sent its own example (body and header examples, read from /openapi.json) against a real sandbox. The
 * examples' placeholder ids are swapped for ids of resources the earlier examples created, as a reader swaps in
 * theirs; nothing else is changed.
 */
type Json = Record<string, unknown>
interface Operation {
  readonly method: string
  readonly path: string
  readonly body: unknown
  readonly headers: Record<string, string>
  readonly documented: ReadonlyArray<string>
}

const PLACEHOLDER = /^([a-z]+)_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b$/

/**
 * Examples that cannot succeed on their own, with the documented answer they get instead: each needs something
 * only a payer has (a wallet's signature, a mailed code) or a policy the example request does not use.
 */
const answeredOtherwise: Record<string, { readonly status: number; readonly code: string }> = {
  // The declared attachment is still `pending`: the PDF's bytes go to its upload URL first.
  "PUT /v1/deposit-requests/{id}/attachments": { status: 409, code: "invalid_state" },
  // The example request uses the `none` policy, which waits for neither proof.
  "POST /v1/payer/deposit-requests/{id}/mailbox/verify": { status: 409, code: "invalid_state" },
  "POST /v1/payer/deposit-requests/{id}/merchant-session": { status: 409, code: "invalid_state" },
  // A fixed statement cannot be signed and current at once (it may be valid for at most 24 hours).
  "POST /v1/payer/deposit-requests/{id}/wallet": { status: 400, code: "invalid_request" },
  // A code, a link's token and an invitation's token arrive by mail: the examples' placeholders are refused.
  "POST /v1/sign-in/email/verify": { status: 400, code: "invalid_request" },
  "POST /v1/sign-in/link": { status: 400, code: "invalid_request" },
  "POST /v1/sign-in/invite": { status: 400, code: "invalid_request" },
  "POST /v1/sign-in/link/preview": { status: 400, code: "invalid_request" },
  "POST /v1/sign-in/invite/preview": { status: 400, code: "invalid_request" },
  // A passkey belongs to a member, and the test's session is the operator CLI's, which has none.
  "POST /v1/account/passkeys/options": { status: 404, code: "member_not_found" },
  "POST /v1/account/passkeys": { status: 404, code: "member_not_found" },
  // Notice choices are a member's own, and the test's session belongs to no member.
  "PATCH /v1/account/member/notices": { status: 404, code: "member_not_found" },
  // A fixed WebAuthn answer cannot sign a fresh challenge.
  "POST /v1/sign-in/passkey": { status: 400, code: "invalid_request" },
  // An answer is taken only for a delivery the listener handed out, which an example cannot have polled.
  "POST /v1/webhook-listeners/{id}/answers": { status: 409, code: "invalid_state" },
  // A resume needs a dashboard session (and a request paused with payout_address_blocked); examples use the key.
  "POST /v1/deposit-requests/{id}/resume": { status: 401, code: "identity_unauthorized" }
}

let service: RunningService
let merchant: Merchant
let spec: Json
beforeAll(async () => {
  const certificates = makeCertificates("shop.example.com")
  service = await startService({ webhookNetwork: localReceiverNetwork("shop.example.com", certificates.ca) })
  merchant = await createMerchant(service.databaseUrl)
  spec = (await (await service.request("/openapi.json")).json()) as Json
})
afterAll(async () => {
  await service?.stop()
})

const resolve = (schema: Json): Json => {
  const ref = schema.$ref
  if (typeof ref !== "string") return schema
  const name = ref.split("/").pop() as string
  return resolve(((spec.components as Json).schemas as Json)[name] as Json)
}

const operations = (): Array<Operation> => {
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(spec.paths as Record<string, Json>)) {
    for (const [method, raw] of Object.entries(item)) {
      const op = raw as Json
      const content = (op.requestBody as Json | undefined)?.content as Json | undefined
      const schema = (content?.["application/json"] as Json | undefined)?.schema as Json | undefined
      if (schema === undefined) continue
      const headers: Record<string, string> = {}
      for (const p of (op.parameters ?? []) as Array<Json>) {
        if (p.in !== "header") continue
        const examples = (p.schema as Json).examples as Array<string> | undefined
        if (p.required === true) expect(examples?.[0], `${method} ${path}: header ${p.name}`).toBeDefined()
        if (examples?.[0] !== undefined) headers[p.name as string] = examples[0]
      }
      const examples = resolve(schema).examples as Array<unknown> | undefined
      expect(examples, `${method.toUpperCase()} ${path} has an example`).toBeDefined()
      out.push({
        method: method.toUpperCase(),
        path,
        body: examples?.[0],
        headers,
        documented: Object.keys(op.responses as Json)
      })
    }
  }
  return out
}

/**
 * Creates first, in the order a reader follows, so later examples find the resources they name; then what must
 * come before the session examples.
 */
const order = [
  "POST /v1/issuers",
  "POST /v1/payout-addresses",
  "POST /v1/customers",
  "POST /v1/webhooks",
  "POST /v1/attachments",
  "POST /v1/deposit-requests",
  // Before the session examples, which end the session the others use.
  "POST /v1/account/invites",
  "POST /v1/account/passkeys/options",
  "POST /v1/account/passkeys",
  "PATCH /v1/account/member/notices"
]

describe("OpenAPI examples", () => {
  it("gives every operation with a body a valid example, and each works against the sandbox", async () => {
    const ids = new Map<string, string>()
    const substitute = (value: unknown): unknown => {
      if (typeof value === "string") {
        const match = PLACEHOLDER.exec(value)
        return match === null ? value : (ids.get(match[1]!) ?? value)
      }
      if (Array.isArray(value)) return value.map(substitute)
      if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v)]))
      }
      return value
    }
    const all = operations().sort((a, b) => {
      const rank = (o: Operation) => {
        const key = `${o.method} ${o.path}`
        // Last: a cancel ends the request the payer examples act on.
        if (key === "POST /v1/deposit-requests/{id}/cancel") return order.length + 1
        const at = order.indexOf(key)
        return at === -1 ? order.length : at
      }
      return rank(a) - rank(b)
    })
    expect(all.length).toBeGreaterThanOrEqual(17)
    const outcomes: Array<string> = []
    for (const op of all) {
      // A path id: the resource its pattern names, as created above (a webhook test queues the event to redeliver).
      let path = op.path
      for (const [, name] of op.path.matchAll(/\{(\w+)\}/g)) {
        const prefix = op.path.includes("/events/")
          ? "evt"
          : (op.path.split("/")[op.path.split("/").indexOf(`{${name}}`) - 1] ?? "")
        const byCollection: Record<string, string> = {
          "deposit-requests": "dr",
          customers: "cus",
          issuers: "iss",
          "payout-addresses": "pa",
          webhooks: "wh",
          "webhook-listeners": "listener",
          events: "evt"
        }
        path = path.replace(`{${name}}`, ids.get(byCollection[prefix] ?? prefix) ?? "")
      }
      const via = op.path.startsWith("/v1/account/") ? "session" : "api_key"
      const res = await service.request(path, {
        method: op.method,
        headers: merchant.headers(via, { "content-type": "application/json", ...op.headers }),
        body: JSON.stringify(substitute(op.body))
      })
      const answer = (await res.json().catch(() => ({}))) as Json
      const code = ((answer.error as Json | undefined)?.code as string | undefined) ?? "-"
      outcomes.push(`${op.method} ${op.path} ${res.status} ${code}`)
      if (res.status < 300) {
        const id = answer.id
        // A listener's id is a `wh_` too, but not an endpoint's to redeliver to.
        if (typeof id === "string")
          ids.set(op.path === "/v1/webhook-listeners" ? "listener" : id.split("_")[0]!, id)
        if (op.path === "/v1/webhooks") {
          const queued = await service.request(`/v1/webhooks/${id}/test`, {
            method: "POST",
            headers: merchant.headers("api_key")
          })
          ids.set("evt", ((await queued.json()) as { event_id: string }).event_id)
        }
      }
    }
    const expected = all.map((op) => {
      const other = answeredOtherwise[`${op.method} ${op.path}`]
      const status = outcomes.find((o) => o.startsWith(`${op.method} ${op.path} `))!.split(" ")[2]!
      expect(op.documented, `${op.method} ${op.path} answered ${status}`).toContain(status)
      return other === undefined
        ? `${op.method} ${op.path} 2xx`
        : `${op.method} ${op.path} ${other.status} ${other.code}`
    })
    expect(outcomes.map((o) => o.replace(/ 2\d\d -$/, " 2xx"))).toEqual(expected)
    // The events the examples caused (the webhook test) are listed as sent, and `Event` types them exactly.
    const listed = (await (
      await service.request("/v1/events", { headers: merchant.headers("api_key") })
    ).json()) as { events: Array<unknown> }
    expect(listed.events.length).toBeGreaterThan(0)
    for (const body of listed.events) Schema.decodeUnknownSync(Event, { onExcessProperty: "error" })(body)
  })
})
