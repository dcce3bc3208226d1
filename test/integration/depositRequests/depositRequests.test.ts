import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { merchantClient } from "../../support/Api"
import { countRows } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { Sandbox, sandboxCall, sandboxLayer } from "../../support/Sandbox"

type Wire = Record<string, unknown> & { id: string; status: string; version: string }
type ErrorBody = { error: { code: string; message: string; param?: string } }

// Room for the concurrency tests: the default bucket of 60 would answer 429 first.
const Live = sandboxWithReferences(sandboxLayer(() => ({ config: { rateLimitCapacity: 10_000 } })))

const key = () => `key-${randomUUID()}`

const call = sandboxCall

const create = (body: Record<string, unknown>, idempotencyKey = key()) =>
  Effect.flatMap(MerchantReferences, (refs) =>
    call<Wire & ErrorBody>(
      "POST",
      "/v1/deposit-requests",
      { issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...body },
      { "idempotency-key": idempotencyKey }
    )
  )

/** Row counts of every table of the service's database. */
const rowCounts = Effect.flatMap(Sandbox, ({ service }) =>
  Effect.promise(() => countRows(service.databaseUrl))
)

layer(Live, { timeout: 120_000 })((it) => {
  describe("POST /v1/deposit-requests", () => {
    it.effect("creates a request in awaiting_payer with wire formats and a 24-hour default deadline", () =>
      Effect.gen(function* () {
        const refs = yield* MerchantReferences
        const res = yield* create({
          amount: "25.500000",
          heading: "Invoice 7\twith a tab",
          metadata: { order: "7" }
        })
        assert.strictEqual(res.status, 201)
        const b = res.body
        assert.match(b.id, /^dr_[0-9a-f-]{36}$/)
        assert.strictEqual(b.status, "awaiting_payer")
        assert.strictEqual(b.amount, "25.500000")
        assert.strictEqual(b.amount_base_units, "25500000")
        assert.strictEqual(b.received, "0.000000")
        assert.strictEqual(b.received_base_units, "0")
        assert.strictEqual(b.heading, "Invoice 7\twith a tab")
        assert.strictEqual(b.reference, "")
        assert.deepStrictEqual(b.metadata, { order: "7" })
        assert.strictEqual(b.payer_policy_mode, "none")
        assert.isNull(b.return_url)
        assert.isNull(b.address)
        assert.isNull(b.payer_wallet)
        assert.strictEqual(b.issuer_id, refs.issuerId)
        assert.strictEqual(b.chain_id, 10143)
        const created = Date.parse(b.created_at as string)
        assert.strictEqual(Date.parse(b.expires_at as string) - created, 24 * 60 * 60 * 1000)
        assert.match(b.created_at as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
      })
    )

    it.effect(
      "replays the same key and document with 200 and Idempotency-Replayed, refuses other immutable fields",
      () =>
        Effect.gen(function* () {
          const k = key()
          const first = yield* create({ amount: "10.000000" }, k)
          assert.strictEqual(first.status, 201)
          const replay = yield* create({ amount: "10.000000" }, k)
          assert.strictEqual(replay.status, 200)
          assert.strictEqual(replay.headers.get("idempotency-replayed"), "true")
          assert.strictEqual(replay.body.id, first.body.id)
          const conflict = yield* create({ amount: "11.000000" }, k)
          assert.strictEqual(conflict.status, 409)
          assert.strictEqual(conflict.body.error.code, "idempotency_conflict")
          // A body no create could ever take is refused for itself, whichever key it carries.
          for (const broken of [
            { amount: "0.000000" },
            { amount: "10.000000", return_url: "ftp://shop.example/x" }
          ]) {
            const refused = yield* create(broken, k)
            assert.strictEqual(refused.status, 400)
            assert.strictEqual(refused.body.error.code, "invalid_request")
          }
        })
    )

    it.effect("keeps a return_url, shows it on reads, and counts it as immutable for replays", () =>
      Effect.gen(function* () {
        const url = "https://shop.example.com/orders/4711?step=done"
        const k = key()
        const made = yield* create({ amount: "2.000000", return_url: url }, k)
        assert.strictEqual(made.status, 201)
        assert.strictEqual(made.body.return_url, url)
        const read = yield* call<Wire>("GET", `/v1/deposit-requests/${made.body.id}`)
        assert.strictEqual(read.body.return_url, url)
        const replay = yield* create({ amount: "2.000000", return_url: url }, k)
        assert.strictEqual(replay.status, 200)
        assert.strictEqual(replay.body.id, made.body.id)
        for (const other of [{ return_url: "https://shop.example.com/elsewhere" }, {}]) {
          const conflict = yield* create({ amount: "2.000000", ...other }, k)
          assert.strictEqual(conflict.status, 409)
          assert.strictEqual(conflict.body.error.code, "idempotency_conflict")
          assert.match(conflict.body.error.message, /return URL/)
        }
        // The sandbox takes a shop on this machine over http.
        const local = yield* create({ amount: "2.000000", return_url: "http://localhost:3000/thanks" })
        assert.strictEqual(local.status, 201)
        assert.strictEqual(local.body.return_url, "http://localhost:3000/thanks")
        const patched = yield* call<ErrorBody>("PATCH", `/v1/deposit-requests/${made.body.id}`, {
          return_url: "https://shop.example.com/other"
        })
        assert.strictEqual(patched.status, 400)
        assert.strictEqual(patched.body.error.param, "return_url")
      })
    )

    it.effect("creates exactly one request for 50 concurrent creates with one key", () =>
      Effect.gen(function* () {
        const k = key()
        const before = yield* rowCounts
        const results = yield* Effect.all(
          Array.from({ length: 50 }, () => create({ amount: "3.000000" }, k)),
          { concurrency: "unbounded" }
        )
        const ids = new Set(results.map((r) => r.body.id))
        assert.strictEqual(ids.size, 1)
        assert.lengthOf(
          results.filter((r) => r.status === 201),
          1
        )
        assert.lengthOf(
          results.filter((r) => r.status === 200),
          49
        )
        const after = yield* rowCounts
        assert.strictEqual((after.deposit_requests ?? 0) - (before.deposit_requests ?? 0), 1)
      })
    )

    it.effect("refuses bad input with the table's errors and writes nothing", () =>
      Effect.gen(function* () {
        const refs = yield* MerchantReferences
        const before = yield* rowCounts
        const cases: Array<[Record<string, unknown>, number, string, string?]> = [
          [{ amount: "1.1234567" }, 400, "invalid_request", "amount"],
          // The spec's format is exact: six fractional digits, no sign, no exponent, no padding.
          ...[
            "12.5",
            "12.5000000",
            "+12.500000",
            " 12.500000",
            "1e1",
            "12",
            "12.",
            ".500000",
            "012.500000"
          ].map((amount): [Record<string, unknown>, number, string, string] => [
            { amount },
            400,
            "invalid_request",
            "amount"
          ]),
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
          [{ amount: "1.000000", expires_at: "2020-01-01T00:00:00Z" }, 400, "invalid_request", "expires_at"],
          ...[
            "http://example.com/back",
            "ftp://shop.example.com/back",
            "javascript:alert(1)",
            "/orders/4711",
            "shop.example.com/back",
            `https://shop.example.com/${"a".repeat(2048)}`
          ].map((return_url): [Record<string, unknown>, number, string, string] => [
            { amount: "1.000000", return_url },
            400,
            "invalid_request",
            "return_url"
          ]),
          [{ amount: "1.000000", return_url: 42 }, 400, "invalid_request", "return_url"]
        ]
        for (const [body, status, code, param] of cases) {
          const res = yield* create(body)
          assert.deepStrictEqual(
            { body, status: res.status, code: res.body.error?.code },
            { body, status, code }
          )
          if (param !== undefined) assert.strictEqual(res.body.error.param, param)
        }
        const noKey = yield* call<ErrorBody>("POST", "/v1/deposit-requests", {
          amount: "1.000000",
          issuer_id: refs.issuerId,
          payout_address_id: refs.payoutAddressId
        })
        assert.strictEqual(noKey.status, 400)
        assert.strictEqual(noKey.body.error.param, "Idempotency-Key")
        const longKey = yield* create({ amount: "1.000000" }, "k".repeat(256))
        assert.strictEqual(longKey.status, 400)
        assert.deepStrictEqual(yield* rowCounts, before)
      })
    )

    it.effect(
      "refuses a payout address disabled after it was used, and a deleted issuer, writing nothing",
      () =>
        Effect.gen(function* () {
          const refs = yield* MerchantReferences
          const payout = yield* call<{ id: string }>("POST", "/v1/payout-addresses", {
            address: "0x8ba1f109551bd432803012645ac136ddd64dba72"
          })
          const issuer = yield* call<{ id: string }>("POST", "/v1/issuers", { display_name: "Short-lived" })
          const own = { issuer_id: issuer.body.id, payout_address_id: payout.body.id }
          // The first create makes the payout address known to this instance, so the next ones take the fast path.
          assert.strictEqual((yield* create({ amount: "1.000000", ...own })).status, 201)
          assert.strictEqual(
            (yield* call("POST", `/v1/payout-addresses/${payout.body.id}/disable`)).status,
            200
          )
          const before = (yield* rowCounts).deposit_requests!
          const disabled = yield* create({ amount: "1.000000", ...own })
          assert.strictEqual(disabled.status, 400)
          assert.strictEqual(disabled.body.error.code, "invalid_request")
          assert.strictEqual(disabled.body.error.param, "payout_address_id")
          const deleted = yield* create({
            amount: "1.000000",
            ...own,
            payout_address_id: refs.payoutAddressId
          })
          assert.strictEqual(deleted.status, 201)
          assert.strictEqual((yield* call("DELETE", `/v1/issuers/${issuer.body.id}`)).status, 204)
          const gone = yield* create({ amount: "1.000000", ...own, payout_address_id: refs.payoutAddressId })
          assert.strictEqual(gone.status, 404)
          assert.strictEqual(gone.body.error.code, "issuer_not_found")
          assert.strictEqual((yield* rowCounts).deposit_requests, before + 1)
        })
    )

    it.effect("returns a merchant-session secret once, and never on a replay", () =>
      Effect.gen(function* () {
        const k = key()
        const res = yield* create(
          { amount: "1.000000", payer_policy_mode: "merchant_session", payer_reference: "user-9" },
          k
        )
        assert.strictEqual(res.status, 201)
        assert.match(res.body.merchant_session_secret as string, /^mss_/)
        assert.strictEqual(res.body.payer_reference, "user-9")
        const replay = yield* create(
          { amount: "1.000000", payer_policy_mode: "merchant_session", payer_reference: "user-9" },
          k
        )
        assert.isUndefined(replay.body.merchant_session_secret)
      })
    )
  })

  describe("reading, listing and updating", () => {
    it.effect("gets a request and answers 404 for bare, wrong-prefix and unknown ids", () =>
      Effect.gen(function* () {
        const made = yield* create({ amount: "2.000000" })
        const got = yield* call<Wire>("GET", `/v1/deposit-requests/${made.body.id}`)
        assert.strictEqual(got.status, 200)
        assert.deepStrictEqual(got.body, made.body)
        const uuid = made.body.id.slice(3)
        for (const id of [uuid, `cus_${uuid}`, `dr_${randomUUID()}`, "dr_nope"]) {
          const res = yield* call<ErrorBody>("GET", `/v1/deposit-requests/${id}`)
          assert.strictEqual(res.status, 404)
          assert.strictEqual(res.body.error.code, "deposit_request_not_found")
        }
      })
    )

    it.effect("lists newest first with a cursor, a status filter and a limit", () =>
      Effect.gen(function* () {
        const { service } = yield* Sandbox
        const own = merchantClient(service, yield* Effect.promise(() => createMerchant(service.databaseUrl)))
        const ownCall = <T>(method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
          Effect.promise(() => own.call<T>(method, path, body, headers))
        const ownRefs = yield* Effect.promise(() => own.setup())
        const made: Array<string> = []
        for (let i = 0; i < 5; i++) {
          const r = yield* ownCall<Wire>(
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
        const page1 = yield* ownCall<{ deposit_requests: Array<Wire>; next_cursor: string }>(
          "GET",
          "/v1/deposit-requests?limit=2"
        )
        assert.deepStrictEqual(
          page1.body.deposit_requests.map((r) => r.id),
          [made[4], made[3]]
        )
        assert.strictEqual(page1.body.next_cursor, made[3])
        const page2 = yield* ownCall<{ deposit_requests: Array<Wire>; next_cursor: string | null }>(
          "GET",
          `/v1/deposit-requests?limit=2&starting_after=${page1.body.next_cursor}`
        )
        assert.deepStrictEqual(
          page2.body.deposit_requests.map((r) => r.id),
          [made[2], made[1]]
        )
        const all = yield* ownCall<{ deposit_requests: Array<Wire>; next_cursor: string | null }>(
          "GET",
          "/v1/deposit-requests"
        )
        assert.lengthOf(all.body.deposit_requests, 5)
        assert.isNull(all.body.next_cursor)
        const filtered = yield* ownCall<{ deposit_requests: Array<Wire> }>(
          "GET",
          "/v1/deposit-requests?status=settled"
        )
        assert.lengthOf(filtered.body.deposit_requests, 0)
        for (const query of [
          "limit=0",
          "limit=101",
          "limit=x",
          `starting_after=${randomUUID()}`,
          "status=bogus"
        ]) {
          const res = yield* ownCall<ErrorBody>("GET", `/v1/deposit-requests?${query}`)
          assert.strictEqual(res.status, 400)
          assert.strictEqual(res.body.error.code, "invalid_request")
        }
      })
    )

    it.effect("patches mutable fields, clears with null, and refuses immutable ones", () =>
      Effect.gen(function* () {
        const made = yield* create({ amount: "4.000000", reference: "ref-1", heading: "h" })
        const patched = yield* call<Wire>("PATCH", `/v1/deposit-requests/${made.body.id}`, {
          heading: "new heading",
          reference: null
        })
        assert.strictEqual(patched.status, 200)
        assert.strictEqual(patched.body.heading, "new heading")
        assert.strictEqual(patched.body.reference, "")
        assert.strictEqual(patched.body.amount, "4.000000")
        assert.isTrue(
          BigInt(patched.body.version) > BigInt(made.body.version),
          `version ${patched.body.version} is above ${made.body.version}`
        )
        const refused = yield* call<ErrorBody>("PATCH", `/v1/deposit-requests/${made.body.id}`, {
          amount: "5.000000"
        })
        assert.strictEqual(refused.status, 400)
        assert.strictEqual(refused.body.error.param, "amount")
        assert.match(refused.body.error.message, /cannot change after creation/)
      })
    )
  })
})
