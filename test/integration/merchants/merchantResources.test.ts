import { randomUUID } from "node:crypto"
import pg from "pg"
import { v7 } from "uuid"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpenApi } from "@effect/platform"
import { Api } from "../../../src/Api"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

type Body = Record<string, unknown> & {
  id: string
  error: { code: string; message: string; param?: string }
}
type Page = Record<string, unknown> & { next_cursor: string | null }

let service: RunningService
let merchant: Merchant
let api: MerchantClient
let db: pg.Client

beforeAll(async () => {
  service = await startService({ config: { rateLimitCapacity: 100_000 } })
  merchant = await createMerchant(service.databaseUrl)
  api = merchantClient(service, merchant)
  db = new pg.Client({ connectionString: service.databaseUrl })
  await db.connect()
})
afterAll(async () => {
  await db?.end()
  await service?.stop()
})

const SECOND_PRECISION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/
const CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7"
let addressCounter = 1
/** A fresh non-zero address, lowercase (the service checksums it). */
const nextAddress = () => `0x${(addressCounter++).toString(16).padStart(40, "a")}`

const expectInvalid = (res: { status: number; body: Body }, param?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400)
  expect(res.body.error.code).toBe("invalid_request")
  if (param !== undefined)
    expect(res.body.error.param ?? "", JSON.stringify(res.body)).toMatch(new RegExp(`^${param}`))
}
const expectNotFound = (res: { status: number; body: Body }, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(404)
  expect(res.body.error.code).toBe(code)
}

/** The three resources, described the same way so every shared rule runs on each. */
const resources = [
  {
    name: "customers",
    path: "/v1/customers",
    prefix: "cus",
    plural: "customers",
    notFound: "customer_not_found",
    table: "customers",
    minimal: () => ({ name: "Ada" }),
    nullable: "description",
    nullableValue: "Pays by the month",
    end: "DELETE" as const
  },
  {
    name: "issuers",
    path: "/v1/issuers",
    prefix: "iss",
    plural: "issuers",
    notFound: "issuer_not_found",
    table: "issuers",
    minimal: () => ({ display_name: "Acme Books" }),
    nullable: "legal_name",
    nullableValue: "Acme Books Ltd",
    end: "DELETE" as const
  },
  {
    name: "payout addresses",
    path: "/v1/payout-addresses",
    prefix: "pa",
    plural: "payout_addresses",
    notFound: "payout_address_not_found",
    table: "payout_addresses",
    minimal: () => ({ address: nextAddress() }),
    nullable: "label",
    nullableValue: "treasury",
    end: "disable" as const
  }
]

describe.each(resources)("$name: shared rules", (r) => {
  const create = (extra: Record<string, unknown> = {}) =>
    api.call<Body>("POST", r.path, { ...r.minimal(), ...extra })

  it("creates with 201, a prefixed id, empty metadata by default, second-precision timestamps", async () => {
    const made = await create()
    expect(made.status).toBe(201)
    expect(made.body.id).toMatch(
      new RegExp(`^${r.prefix}_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)
    )
    expect(made.body.metadata).toEqual({})
    expect(made.body[r.nullable]).toBeNull()
    expect(made.body.created_at).toMatch(SECOND_PRECISION)
    expect(made.body.updated_at).toMatch(SECOND_PRECISION)
    const read = await api.call<Body>("GET", `${r.path}/${made.body.id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(made.body)
  })

  it("rejects unknown fields, wrong types, malformed JSON, a missing JSON content type and control characters", async () => {
    expectInvalid(await create({ surprise: 1 }), "surprise")
    expectInvalid(await create({ metadata: "x" }), "metadata")
    expectInvalid(await create({ [r.nullable]: 42 }), r.nullable)
    expectInvalid(await api.call<Body>("POST", r.path, "{not json"))
    expectInvalid(await api.call<Body>("POST", r.path, "[]"))
    const plain = await service.request(r.path, {
      method: "POST",
      headers: merchant.headers("api_key", { "content-type": "text/plain" }),
      body: JSON.stringify(r.minimal())
    })
    expect(plain.status).toBe(400)
    expectInvalid(await create({ [r.nullable]: "bell\u0007" }), r.nullable)
    // tab, LF and CR are text, kept as sent
    const kept = await create({ [r.nullable]: "line one\nline\ttwo\r" })
    expect(kept.status).toBe(201)
    expect(kept.body[r.nullable]).toBe("line one\nline\ttwo\r")
  })

  it("refuses a body above 64 KiB with 413", async () => {
    const res = await api.call<Body>("POST", r.path, { ...r.minimal(), [r.nullable]: "x".repeat(70 * 1024) })
    expect(res.status).toBe(413)
    expect(res.body.error.code).toBe("payload_too_large")
  })

  it("enforces the metadata rules: 50 keys of up to 40 characters, string values up to 500, no controls", async () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key_${i}`, "v"]))
    const ok = await create({ metadata: { ...fifty } })
    expect(ok.status).toBe(201)
    expect(ok.body.metadata).toEqual(fifty)
    expectInvalid(await create({ metadata: { ...fifty, one_more: "v" } }), "metadata")
    expect((await create({ metadata: { ["k".repeat(40)]: "v".repeat(500) } })).status).toBe(201)
    expectInvalid(await create({ metadata: { ["k".repeat(41)]: "v" } }), "metadata")
    expectInvalid(await create({ metadata: { k: "v".repeat(501) } }), "metadata")
    expectInvalid(await create({ metadata: { k: 1 } }), "metadata")
    expectInvalid(await create({ metadata: { k: null } }), "metadata")
    expectInvalid(await create({ metadata: { k: { nested: "x" } } }), "metadata")
    expectInvalid(await create({ metadata: ["a"] }), "metadata")
    expectInvalid(await create({ metadata: { "bad\u0001key": "v" } }), "metadata")
    expectInvalid(await create({ metadata: { k: "bad\u001fvalue" } }), "metadata")
    // multi-byte text counts characters, and line breaks are allowed in values
    expect((await create({ metadata: { note: "é".repeat(500), lines: "a\nb" } })).status).toBe(201)
  })

  it("PATCH: omitted fields stay, null clears, metadata is replaced whole, updated_at moves, unknown fields refused", async () => {
    const made = await create({ [r.nullable]: r.nullableValue, metadata: { a: "1", b: "2" } })
    expect(made.status).toBe(201)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const meta = await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, { metadata: { c: "3" } })
    expect(meta.status).toBe(200)
    expect(meta.body.metadata).toEqual({ c: "3" })
    expect(meta.body[r.nullable]).toBe(r.nullableValue)
    expect(meta.body.created_at).toBe(made.body.created_at)
    expect(Date.parse(meta.body.updated_at as string)).toBeGreaterThan(
      Date.parse(made.body.updated_at as string)
    )

    const empty = await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, {})
    expect(empty.status).toBe(200)
    expect({ ...empty.body, updated_at: null }).toEqual({ ...meta.body, updated_at: null })

    const cleared = await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, {
      [r.nullable]: null,
      metadata: null
    })
    expect(cleared.status).toBe(200)
    expect(cleared.body[r.nullable]).toBeNull()
    expect(cleared.body.metadata).toEqual({})

    expectInvalid(await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, { nope: true }), "nope")
    expectInvalid(await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, { id: made.body.id }), "id")
    expectInvalid(
      await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, { created_at: "2020-01-01T00:00:00Z" }),
      "created_at"
    )
    expectInvalid(
      await api.call<Body>("PATCH", `${r.path}/${made.body.id}`, { metadata: { k: "v".repeat(501) } }),
      "metadata"
    )
    // a refused patch changes nothing
    expect((await api.call<Body>("GET", `${r.path}/${made.body.id}`)).body).toEqual(cleared.body)
  })

  it("answers 404 <resource>_not_found for malformed, bare, wrong-prefix and unknown path ids on every id route", async () => {
    const made = await create()
    const uuid = made.body.id.slice(r.prefix.length + 1)
    const otherPrefix = r.prefix === "cus" ? "iss" : "cus"
    const bad = [
      uuid,
      `${otherPrefix}_${uuid}`,
      `${r.prefix}_${uuid.toUpperCase()}`,
      `${r.prefix}_${uuid.replaceAll("-", "")}`,
      `${r.prefix}_not-a-uuid`,
      `${r.prefix}_${v7()}`,
      `${made.body.id}x`
    ]
    for (const id of bad) {
      expectNotFound(await api.call<Body>("GET", `${r.path}/${encodeURIComponent(id)}`), r.notFound)
      expectNotFound(
        await api.call<Body>("PATCH", `${r.path}/${encodeURIComponent(id)}`, { metadata: { k: "v" } }),
        r.notFound
      )
      const end =
        r.end === "DELETE"
          ? await api.call<Body>("DELETE", `${r.path}/${encodeURIComponent(id)}`)
          : await api.call<Body>("POST", `${r.path}/${encodeURIComponent(id)}/disable`)
      expectNotFound(end, r.notFound)
    }
    // none of the probes touched the real one
    expect((await api.call<Body>("GET", `${r.path}/${made.body.id}`)).body).toEqual(made.body)
  })
})

describe.each(resources)("$name: lists", (r) => {
  let own: MerchantClient
  const made: Array<string> = []

  beforeAll(async () => {
    // an account of its own, so the list holds exactly these records
    own = merchantClient(service, await createMerchant(service.databaseUrl))
    for (let i = 0; i < 25; i++) {
      const res = await own.call<Body>("POST", r.path, r.minimal())
      expect(res.status).toBe(201)
      made.push(res.body.id)
    }
  })

  const page = (query = "") => own.call<Page & { error: Body["error"] }>("GET", `${r.path}${query}`)
  const ids = (p: Page) => (p[r.plural] as Array<{ id: string }>).map((x) => x.id)

  it("envelopes under the plural name, newest first, 20 by default, with next_cursor", async () => {
    const first = await page()
    expect(first.status).toBe(200)
    expect(Object.keys(first.body).sort()).toEqual([r.plural, "next_cursor"].sort())
    expect(ids(first.body)).toEqual([...made].reverse().slice(0, 20))
    expect(first.body.next_cursor).toBe(made[5])
  })

  it("walks every page with starting_after and ends with a null cursor", async () => {
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await page(`?limit=7${cursor ? `&starting_after=${cursor}` : ""}`)
      expect(res.status).toBe(200)
      seen.push(...ids(res.body))
      cursor = res.body.next_cursor
      pages++
    } while (cursor !== null && pages < 10)
    expect(pages).toBe(4)
    expect(seen).toEqual([...made].reverse())
    const exact = await page("?limit=25")
    expect(ids(exact.body)).toHaveLength(25)
    expect(exact.body.next_cursor).toBeNull()
    const hundred = await page("?limit=100")
    expect(hundred.status).toBe(200)
    expect(hundred.body.next_cursor).toBeNull()
    const one = await page("?limit=1")
    expect(ids(one.body)).toEqual([made[24]])
    expect(one.body.next_cursor).toBe(made[24])
  })

  it("refuses a limit outside 1..100 and a starting_after that is not a full id of this prefix", async () => {
    for (const limit of ["0", "101", "-1", "1.5", "abc", ""]) {
      expectInvalid((await page(`?limit=${limit}`)) as never, "limit")
    }
    const uuid = made[10]!.slice(r.prefix.length + 1)
    const otherPrefix = r.prefix === "pa" ? "cus" : "pa"
    for (const cursor of [
      uuid,
      `${otherPrefix}_${uuid}`,
      `${r.prefix}_nope`,
      `${r.prefix}_${uuid.toUpperCase()}`
    ]) {
      expectInvalid((await page(`?starting_after=${encodeURIComponent(cursor)}`)) as never, "starting_after")
    }
  })
})

describe("customers", () => {
  it("requires a name, validates the email, keeps the name unclearable", async () => {
    expectInvalid(await api.call<Body>("POST", "/v1/customers", {}), "name")
    expectInvalid(await api.call<Body>("POST", "/v1/customers", { name: "" }), "name")
    expectInvalid(await api.call<Body>("POST", "/v1/customers", { name: null }), "name")
    for (const email of ["not-an-email", "a@", "@b.example", "a b@c.example", "a@b@c.example", ""]) {
      expectInvalid(await api.call<Body>("POST", "/v1/customers", { name: "Ada", email }), "email")
    }
    const made = await api.call<Body>("POST", "/v1/customers", {
      name: "Ada Lovelace",
      email: "ada@example.com",
      description: "Analyst",
      metadata: { crm_id: "42" }
    })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({
      name: "Ada Lovelace",
      email: "ada@example.com",
      description: "Analyst",
      metadata: { crm_id: "42" }
    })
    expectInvalid(await api.call<Body>("PATCH", `/v1/customers/${made.body.id}`, { name: null }), "name")
    expectInvalid(await api.call<Body>("PATCH", `/v1/customers/${made.body.id}`, { email: "nope" }), "email")
    const patched = await api.call<Body>("PATCH", `/v1/customers/${made.body.id}`, {
      email: null,
      name: "Ada"
    })
    expect(patched.body).toMatchObject({ name: "Ada", email: null, description: "Analyst" })
  })

  it("deletes softly: 204, then 404 on read, patch and delete, gone from lists, row kept with deleted_at", async () => {
    const made = await api.call<Body>("POST", "/v1/customers", { name: "Temp" })
    const del = await api.call<Body>("DELETE", `/v1/customers/${made.body.id}`)
    expect(del.status).toBe(204)
    expect(del.body).toBeNull()
    expectNotFound(await api.call<Body>("GET", `/v1/customers/${made.body.id}`), "customer_not_found")
    expectNotFound(
      await api.call<Body>("PATCH", `/v1/customers/${made.body.id}`, { name: "Back" }),
      "customer_not_found"
    )
    expectNotFound(await api.call<Body>("DELETE", `/v1/customers/${made.body.id}`), "customer_not_found")
    const list = await api.call<{ customers: Array<{ id: string }> }>("GET", "/v1/customers?limit=100")
    expect(list.body.customers.map((c) => c.id)).not.toContain(made.body.id)
    const row = await db.query("select name, deleted_at from customers where id = $1", [
      made.body.id.slice(4)
    ])
    expect(row.rows[0]?.name).toBe("Temp")
    expect(row.rows[0]?.deleted_at).toBeInstanceOf(Date)
  })
})

describe("issuers", () => {
  it("requires a display name of at most 100 characters and validates support email and https URL", async () => {
    expectInvalid(await api.call<Body>("POST", "/v1/issuers", {}), "display_name")
    expectInvalid(await api.call<Body>("POST", "/v1/issuers", { display_name: "" }), "display_name")
    expectInvalid(
      await api.call<Body>("POST", "/v1/issuers", { display_name: "x".repeat(101) }),
      "display_name"
    )
    expect((await api.call<Body>("POST", "/v1/issuers", { display_name: "x".repeat(100) })).status).toBe(201)
    for (const support_url of [
      "http://acme.example",
      "ftp://acme.example",
      "acme.example",
      "https://",
      "https://a b.example"
    ]) {
      expectInvalid(
        await api.call<Body>("POST", "/v1/issuers", { display_name: "Acme", support_url }),
        "support_url"
      )
    }
    expectInvalid(
      await api.call<Body>("POST", "/v1/issuers", { display_name: "Acme", support_email: "help" }),
      "support_email"
    )
    const made = await api.call<Body>("POST", "/v1/issuers", {
      display_name: "Acme",
      legal_name: "Acme Books Ltd",
      support_email: "help@acme.example",
      support_url: "https://acme.example/help",
      metadata: { region: "eu" }
    })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({
      display_name: "Acme",
      legal_name: "Acme Books Ltd",
      support_email: "help@acme.example",
      support_url: "https://acme.example/help",
      metadata: { region: "eu" }
    })
    expectInvalid(
      await api.call<Body>("PATCH", `/v1/issuers/${made.body.id}`, { display_name: null }),
      "display_name"
    )
    expectInvalid(
      await api.call<Body>("PATCH", `/v1/issuers/${made.body.id}`, { display_name: "y".repeat(101) }),
      "display_name"
    )
    expectInvalid(
      await api.call<Body>("PATCH", `/v1/issuers/${made.body.id}`, { support_url: "http://acme.example" }),
      "support_url"
    )
    const patched = await api.call<Body>("PATCH", `/v1/issuers/${made.body.id}`, {
      support_url: null,
      support_email: null,
      display_name: "Acme 2"
    })
    expect(patched.body).toMatchObject({
      display_name: "Acme 2",
      legal_name: "Acme Books Ltd",
      support_email: null,
      support_url: null,
      metadata: { region: "eu" }
    })
  })

  it("deletes softly: 204, then 404, gone from lists, and a deleted issuer cannot back a new deposit request", async () => {
    const issuer = await api.call<Body>("POST", "/v1/issuers", { display_name: "Short-lived" })
    const payout = await api.call<Body>("POST", "/v1/payout-addresses", { address: nextAddress() })
    expect((await api.call("DELETE", `/v1/issuers/${issuer.body.id}`)).status).toBe(204)
    expectNotFound(await api.call<Body>("GET", `/v1/issuers/${issuer.body.id}`), "issuer_not_found")
    expectNotFound(await api.call<Body>("DELETE", `/v1/issuers/${issuer.body.id}`), "issuer_not_found")
    const list = await api.call<{ issuers: Array<{ id: string }> }>("GET", "/v1/issuers?limit=100")
    expect(list.body.issuers.map((c) => c.id)).not.toContain(issuer.body.id)
    const row = await db.query("select deleted_at from issuers where id = $1", [issuer.body.id.slice(4)])
    expect(row.rows[0]?.deleted_at).toBeInstanceOf(Date)
    const refused = await api.call<Body>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: payout.body.id },
      { "idempotency-key": randomUUID() }
    )
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect(refused.status).toBeLessThan(500)
  })
})

describe("payout addresses", () => {
  it("accepts any letter case and answers EIP-55; refuses the zero address and malformed addresses", async () => {
    for (const input of [CHECKSUMMED.toLowerCase(), `0x${CHECKSUMMED.slice(2).toUpperCase()}`, CHECKSUMMED]) {
      const made = await api.call<Body>("POST", "/v1/payout-addresses", { address: input })
      expect(made.status).toBe(201)
      expect(made.body.address).toBe(CHECKSUMMED)
      expect(made.body.disabled_at).toBeNull()
    }
    for (const address of [
      `0x${"0".repeat(40)}`,
      `0X${"0".repeat(40)}`,
      "0x1234",
      `0x${"g".repeat(40)}`,
      CHECKSUMMED.slice(2),
      `${CHECKSUMMED}00`,
      ""
    ]) {
      expectInvalid(await api.call<Body>("POST", "/v1/payout-addresses", { address }), "address")
    }
    expectInvalid(await api.call<Body>("POST", "/v1/payout-addresses", {}), "address")
    expectInvalid(await api.call<Body>("POST", "/v1/payout-addresses", { address: 5 }), "address")
  })

  it("PATCH changes only label and metadata; sending address (even the same one) is 400 naming address", async () => {
    const made = await api.call<Body>("POST", "/v1/payout-addresses", { address: CHECKSUMMED, label: "main" })
    for (const address of [nextAddress(), CHECKSUMMED, null]) {
      const res = await api.call<Body>("PATCH", `/v1/payout-addresses/${made.body.id}`, {
        address,
        label: "x"
      })
      expectInvalid(res, "address")
      expect(res.body.error.message).toMatch(/address/)
    }
    const patched = await api.call<Body>("PATCH", `/v1/payout-addresses/${made.body.id}`, {
      label: "renamed",
      metadata: { desk: "ops" }
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ address: CHECKSUMMED, label: "renamed", metadata: { desk: "ops" } })
    const cleared = await api.call<Body>("PATCH", `/v1/payout-addresses/${made.body.id}`, { label: null })
    expect(cleared.body).toMatchObject({ address: CHECKSUMMED, label: null, metadata: { desk: "ops" } })
    expectInvalid(
      await api.call<Body>("PATCH", `/v1/payout-addresses/${made.body.id}`, {
        disabled_at: "2020-01-01T00:00:00Z"
      }),
      "disabled_at"
    )
  })

  it("disables with 200 and disabled_at; stays readable, listed and patchable; disabling again keeps the first time", async () => {
    const made = await api.call<Body>("POST", "/v1/payout-addresses", { address: nextAddress() })
    const disabled = await api.call<Body>("POST", `/v1/payout-addresses/${made.body.id}/disable`)
    expect(disabled.status).toBe(200)
    expect(disabled.body.disabled_at).toMatch(SECOND_PRECISION)
    expect(disabled.body.address).toBe(made.body.address)
    const read = await api.call<Body>("GET", `/v1/payout-addresses/${made.body.id}`)
    expect(read.status).toBe(200)
    expect(read.body.disabled_at).toBe(disabled.body.disabled_at)
    const list = await api.call<{ payout_addresses: Array<{ id: string; disabled_at: string | null }> }>(
      "GET",
      "/v1/payout-addresses?limit=100"
    )
    expect(list.body.payout_addresses.find((p) => p.id === made.body.id)?.disabled_at).toBe(
      disabled.body.disabled_at
    )
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const again = await api.call<Body>("POST", `/v1/payout-addresses/${made.body.id}/disable`)
    expect(again.status).toBe(200)
    expect(again.body.disabled_at).toBe(disabled.body.disabled_at)
    const relabelled = await api.call<Body>("PATCH", `/v1/payout-addresses/${made.body.id}`, { label: "old" })
    expect(relabelled.status).toBe(200)
    expect(relabelled.body.disabled_at).toBe(disabled.body.disabled_at)
    // payout addresses are disabled, never deleted
    expect((await api.call("DELETE", `/v1/payout-addresses/${made.body.id}`)).status).toBe(405)
  })

  it("refuses a disabled payout address for a new deposit request, naming payout_address_id", async () => {
    const issuer = await api.call<Body>("POST", "/v1/issuers", { display_name: "Acme" })
    const payout = await api.call<Body>("POST", "/v1/payout-addresses", { address: nextAddress() })
    const usable = await api.call<Body>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: payout.body.id },
      { "idempotency-key": randomUUID() }
    )
    expect(usable.status).toBe(201)
    expect((await api.call("POST", `/v1/payout-addresses/${payout.body.id}/disable`)).status).toBe(200)
    const refused = await api.call<Body>(
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: payout.body.id },
      { "idempotency-key": randomUUID() }
    )
    expectInvalid(refused, "payout_address_id")
  })
})

describe("the OpenAPI description", () => {
  const spec = OpenApi.fromApi(Api) as unknown as {
    paths: Record<string, Record<string, unknown>>
    components: { schemas: Record<string, { description?: string }> }
  }

  it("has every merchant resource route", () => {
    const methods = (path: string) => Object.keys(spec.paths[path] ?? {}).sort()
    expect(methods("/v1/customers")).toEqual(["get", "post"])
    expect(methods("/v1/customers/{id}")).toEqual(["delete", "get", "patch"])
    expect(methods("/v1/issuers")).toEqual(["get", "post"])
    expect(methods("/v1/issuers/{id}")).toEqual(["delete", "get", "patch"])
    expect(methods("/v1/payout-addresses")).toEqual(["get", "post"])
    expect(methods("/v1/payout-addresses/{id}")).toEqual(["get", "patch"])
    expect(methods("/v1/payout-addresses/{id}/disable")).toEqual(["post"])
  })

  it("documents the metadata limits, control characters included, on the Metadata schema", () => {
    const metadata = spec.components.schemas.Metadata as {
      description?: string
      maxProperties?: number
      propertyNames?: { maxLength?: number }
      patternProperties?: Record<string, { maxLength?: number }>
    }
    expect(metadata.maxProperties).toBe(50)
    expect(metadata.propertyNames?.maxLength).toBe(40)
    expect(Object.values(metadata.patternProperties ?? {})[0]?.maxLength).toBe(500)
    expect(metadata.description).toMatch(/50 pairs/)
    expect(metadata.description).toMatch(/1–40 characters/)
    expect(metadata.description).toMatch(/500 characters/)
    expect(metadata.description).toMatch(/control characters/)
  })
})
