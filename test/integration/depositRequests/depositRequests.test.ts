import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { countRows, createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

type Wire = Record<string, unknown> & { id: string; status: string; version: string }
type ErrorBody = { error: { code: string; message: string; param?: string } }

let db: { url: string; drop: () => Promise<void> }
let service: RunningService
let api: MerchantClient
let refs: { issuerId: string; payoutAddressId: string }

beforeAll(async () => {
  db = await createTestDatabase()
  // Room for the concurrency tests: the default bucket of 60 would answer 429 first.
  service = await startService({ database: db, config: { rateLimitCapacity: 10_000 } })
  api = merchantClient(service, await createMerchant(db.url))
  refs = await api.setup()
})
afterAll(async () => {
  await service?.stop()
  await db?.drop()
})

const key = () => `key-${randomUUID()}`
const create = (body: Record<string, unknown>, idempotencyKey = key()) =>
  api.call<Wire & ErrorBody>(
    "POST",
    "/v1/deposit-requests",
    { issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...body },
    { "idempotency-key": idempotencyKey }
  )

describe("POST /v1/deposit-requests", () => {
  it("creates a request in awaiting_payer with wire formats and a 24-hour default deadline", async () => {
    const res = await create({
      amount: "25.500000",
      heading: "Invoice 7\twith a tab",
      metadata: { order: "7" }
    })
    expect(res.status).toBe(201)
    const b = res.body
    expect(b.id).toMatch(/^dr_[0-9a-f-]{36}$/)
    expect(b.status).toBe("awaiting_payer")
    expect(b.amount).toBe("25.500000")
    expect(b.amount_base_units).toBe("25500000")
    expect(b.received).toBe("0.000000")
    expect(b.received_base_units).toBe("0")
    expect(b.heading).toBe("Invoice 7\twith a tab")
    expect(b.reference).toBe("")
    expect(b.metadata).toEqual({ order: "7" })
    expect(b.payer_policy_mode).toBe("none")
    expect(b.address).toBeNull()
    expect(b.payer_wallet).toBeNull()
    expect(b.issuer_id).toBe(refs.issuerId)
    expect(b.chain_id).toBe(10143)
    const created = Date.parse(b.created_at as string)
    expect(Date.parse(b.expires_at as string) - created).toBe(24 * 60 * 60 * 1000)
    expect(b.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
  })

  it("replays the same key and document with 200 and Idempotency-Replayed, refuses other immutable fields", async () => {
    const k = key()
    const first = await create({ amount: "10.000000" }, k)
    expect(first.status).toBe(201)
    const replay = await create({ amount: "10.000000" }, k)
    expect(replay.status).toBe(200)
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(replay.body.id).toBe(first.body.id)
    const conflict = await create({ amount: "11.000000" }, k)
    expect(conflict.status).toBe(409)
    expect(conflict.body.error.code).toBe("idempotency_conflict")
  })

  it("creates exactly one request for 50 concurrent creates with one key", async () => {
    const k = key()
    const before = await countRows(db.url)
    const results = await Promise.all(Array.from({ length: 50 }, () => create({ amount: "3.000000" }, k)))
    const ids = new Set(results.map((r) => r.body.id))
    expect(ids.size).toBe(1)
    expect(results.filter((r) => r.status === 201)).toHaveLength(1)
    expect(results.filter((r) => r.status === 200)).toHaveLength(49)
    const after = await countRows(db.url)
    expect((after.deposit_requests ?? 0) - (before.deposit_requests ?? 0)).toBe(1)
  })

  it("refuses bad input with the table's errors and writes nothing", async () => {
    const before = await countRows(db.url)
    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ amount: "1.1234567" }, 400, "invalid_request", "amount"],
      // The spec's format is exact: six fractional digits, no sign, no exponent, no padding.
      ...["12.5", "12.5000000", "+12.500000", " 12.500000", "1e1", "12", "12.", ".500000", "012.500000"].map(
        (amount): [Record<string, unknown>, number, string, string] => [
          { amount },
          400,
          "invalid_request",
          "amount"
        ]
      ),
      [{ amount: "0.000000" }, 400, "invalid_request", "amount"],
      [{ amount: 5 }, 400, "invalid_request", "amount"],
      [{ amount: "-1" }, 400, "invalid_request", "amount"],
      [{}, 400, "invalid_request", "amount"],
      [{ amount: "1.000000", color: "red" }, 400, "invalid_request", "color"],
      [{ amount: "1.000000", issuer_id: randomUUID() }, 400, "invalid_request", "issuer_id"],
      [{ amount: "1.000000", issuer_id: `cus_${randomUUID()}` }, 400, "invalid_request", "issuer_id"],
      [{ amount: "1.000000", issuer_id: `iss_${randomUUID()}` }, 404, "issuer_not_found"],
      [{ amount: "1.000000", payout_address_id: `pa_${randomUUID()}` }, 404, "payout_address_not_found"],
      [{ amount: "1.000000", customer_id: `cus_${randomUUID()}` }, 404, "customer_not_found"],
      [{ amount: "1.000000", heading: "bell\u0007" }, 400, "invalid_request", "heading"],
      [{ amount: "1.000000", payer_policy_mode: "mailbox" }, 400, "invalid_request", "expected_email"],
      [{ amount: "1.000000", expected_email: "a@b.example" }, 400, "invalid_request", "expected_email"],
      [{ amount: "1.000000", expires_at: "2020-01-01T00:00:00Z" }, 400, "invalid_request", "expires_at"]
    ]
    for (const [body, status, code, param] of cases) {
      const res = await create(body)
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status, code })
      if (param !== undefined) expect(res.body.error.param).toBe(param)
    }
    const noKey = await api.call<ErrorBody>("POST", "/v1/deposit-requests", {
      amount: "1.000000",
      issuer_id: refs.issuerId,
      payout_address_id: refs.payoutAddressId
    })
    expect(noKey.status).toBe(400)
    expect(noKey.body.error.param).toBe("idempotency-key")
    const longKey = await create({ amount: "1.000000" }, "k".repeat(256))
    expect(longKey.status).toBe(400)
    expect(await countRows(db.url)).toEqual(before)
  })

  it("refuses a payout address disabled after it was used, and a deleted issuer, writing nothing", async () => {
    const payout = await api.call<{ id: string }>("POST", "/v1/payout-addresses", {
      address: "0x8ba1f109551bd432803012645ac136ddd64dba72"
    })
    const issuer = await api.call<{ id: string }>("POST", "/v1/issuers", { display_name: "Short-lived" })
    const own = { issuer_id: issuer.body.id, payout_address_id: payout.body.id }
    // The first create makes the payout address known to this instance, so the next ones take the fast path.
    expect((await create({ amount: "1.000000", ...own })).status).toBe(201)
    expect((await api.call("POST", `/v1/payout-addresses/${payout.body.id}/disable`)).status).toBe(200)
    const before = (await countRows(db.url)).deposit_requests!
    const disabled = await create({ amount: "1.000000", ...own })
    expect(disabled.status).toBe(400)
    expect(disabled.body.error.code).toBe("invalid_request")
    expect(disabled.body.error.param).toBe("payout_address_id")
    const deleted = await create({ amount: "1.000000", ...own, payout_address_id: refs.payoutAddressId })
    expect(deleted.status).toBe(201)
    expect((await api.call("DELETE", `/v1/issuers/${issuer.body.id}`)).status).toBe(204)
    const gone = await create({ amount: "1.000000", ...own, payout_address_id: refs.payoutAddressId })
    expect(gone.status).toBe(404)
    expect(gone.body.error.code).toBe("issuer_not_found")
    expect((await countRows(db.url)).deposit_requests).toBe(before + 1)
  })

  it("returns a merchant-session secret once, and never on a replay", async () => {
    const k = key()
    const res = await create(
      { amount: "1.000000", payer_policy_mode: "merchant_session", payer_reference: "user-9" },
      k
    )
    expect(res.status).toBe(201)
    expect(res.body.merchant_session_secret).toMatch(/^mss_/)
    expect(res.body.payer_reference).toBe("user-9")
    const replay = await create(
      { amount: "1.000000", payer_policy_mode: "merchant_session", payer_reference: "user-9" },
      k
    )
    expect(replay.body.merchant_session_secret).toBeUndefined()
  })
})

describe("reading, listing and updating", () => {
  it("gets a request and answers 404 for bare, wrong-prefix and unknown ids", async () => {
    const made = await create({ amount: "2.000000" })
    const got = await api.call<Wire>("GET", `/v1/deposit-requests/${made.body.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(made.body)
    const uuid = made.body.id.slice(3)
    for (const id of [uuid, `cus_${uuid}`, `dr_${randomUUID()}`, "dr_nope"]) {
      const res = await api.call<ErrorBody>("GET", `/v1/deposit-requests/${id}`)
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe("deposit_request_not_found")
    }
  })

  it("lists newest first with a cursor, a status filter and a limit", async () => {
    const own = merchantClient(service, await createMerchant(db.url))
    const ownRefs = await own.setup()
    const made: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const r = await own.call<Wire>(
        "POST",
        "/v1/deposit-requests",
        {
          amount: `${i + 1}.000000`,
          issuer_id: ownRefs.issuerId,
          payout_address_id: ownRefs.payoutAddressId
        },
        { "idempotency-key": key() }
      )
      made.push(r.body.id)
    }
    const page1 = await own.call<{ deposit_requests: Array<Wire>; next_cursor: string }>(
      "GET",
      "/v1/deposit-requests?limit=2"
    )
    expect(page1.body.deposit_requests.map((r) => r.id)).toEqual([made[4], made[3]])
    expect(page1.body.next_cursor).toBe(made[3])
    const page2 = await own.call<{ deposit_requests: Array<Wire>; next_cursor: string | null }>(
      "GET",
      `/v1/deposit-requests?limit=2&starting_after=${page1.body.next_cursor}`
    )
    expect(page2.body.deposit_requests.map((r) => r.id)).toEqual([made[2], made[1]])
    const all = await own.call<{ deposit_requests: Array<Wire>; next_cursor: string | null }>(
      "GET",
      "/v1/deposit-requests"
    )
    expect(all.body.deposit_requests).toHaveLength(5)
    expect(all.body.next_cursor).toBeNull()
    const filtered = await own.call<{ deposit_requests: Array<Wire> }>(
      "GET",
      "/v1/deposit-requests?status=settled"
    )
    expect(filtered.body.deposit_requests).toHaveLength(0)
    for (const query of [
      "limit=0",
      "limit=101",
      "limit=x",
      `starting_after=${randomUUID()}`,
      "status=bogus"
    ]) {
      const res = await own.call<ErrorBody>("GET", `/v1/deposit-requests?${query}`)
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe("invalid_request")
    }
  })

  it("patches mutable fields, clears with null, and refuses immutable ones", async () => {
    const made = await create({ amount: "4.000000", reference: "ref-1", heading: "h" })
    const patched = await api.call<Wire>("PATCH", `/v1/deposit-requests/${made.body.id}`, {
      heading: "new heading",
      reference: null
    })
    expect(patched.status).toBe(200)
    expect(patched.body.heading).toBe("new heading")
    expect(patched.body.reference).toBe("")
    expect(patched.body.amount).toBe("4.000000")
    expect(BigInt(patched.body.version)).toBeGreaterThan(BigInt(made.body.version))
    const refused = await api.call<ErrorBody>("PATCH", `/v1/deposit-requests/${made.body.id}`, {
      amount: "5.000000"
    })
    expect(refused.status).toBe(400)
    expect(refused.body.error.param).toBe("amount")
    expect(refused.body.error.message).toMatch(/cannot change after creation/)
  })
})
