import { randomUUID } from "node:crypto"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { MerchantClient } from "../../support/Api"
import { sandboxCall, sandboxLayer } from "../../support/Sandbox"

type Body = Record<string, unknown> & { id: string; error: { code: string; param?: string } }

/** A JSON call as the sandbox's merchant. */
const call = <T = Body>(...args: Parameters<MerchantClient["call"]>) => sandboxCall<T>(...args)

layer(
  sandboxLayer(() => ({ config: { rateLimitCapacity: 10_000 } })),
  { timeout: 60_000 }
)((it) => {
  describe("customers", () => {
    it.effect("creates, reads, patches (null clears), lists and deletes", () =>
      Effect.gen(function* () {
        const made = yield* call("POST", "/v1/customers", {
          name: "Ada",
          email: "ada@example.com",
          metadata: { tier: "gold" }
        })
        assert.strictEqual(made.status, 201)
        assert.match(made.body.id, /^cus_/)
        assert.deepInclude(made.body, {
          name: "Ada",
          email: "ada@example.com",
          description: null,
          metadata: { tier: "gold" }
        })
        const patched = yield* call("PATCH", `/v1/customers/${made.body.id}`, {
          email: null,
          description: "VIP"
        })
        assert.deepInclude(patched.body, {
          name: "Ada",
          email: null,
          description: "VIP",
          metadata: { tier: "gold" }
        })
        const list = yield* call<{ customers: Array<Body>; next_cursor: string | null }>(
          "GET",
          "/v1/customers?limit=1"
        )
        assert.strictEqual(list.body.customers[0]?.id, made.body.id)
        assert.strictEqual((yield* call("DELETE", `/v1/customers/${made.body.id}`)).status, 204)
        const gone = yield* call("GET", `/v1/customers/${made.body.id}`)
        assert.strictEqual(gone.status, 404)
        assert.strictEqual(gone.body.error.code, "customer_not_found")
      })
    )

    it.effect("refuses bad fields naming them", () =>
      Effect.gen(function* () {
        for (const [body, param] of [
          [{}, "name"],
          [{ name: "" }, "name"],
          [{ name: "x", email: "not-an-email" }, "email"],
          [{ name: "x", extra: 1 }, "extra"],
          [
            {
              name: "x",
              metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))
            },
            "metadata"
          ],
          [{ name: "x", metadata: { ["k".repeat(41)]: "v" } }, "metadata"],
          [{ name: "x", metadata: { k: "v".repeat(501) } }, "metadata"]
        ] as const) {
          const res = yield* call("POST", "/v1/customers", body)
          assert.strictEqual(res.status, 400)
          assert.isTrue(res.body.error.param?.startsWith(param))
        }
      })
    )
  })

  describe("issuers", () => {
    it.effect("creates with a display name, refuses a non-https support URL, deletes", () =>
      Effect.gen(function* () {
        const made = yield* call("POST", "/v1/issuers", {
          display_name: "Acme",
          support_url: "https://acme.example/help"
        })
        assert.strictEqual(made.status, 201)
        assert.match(made.body.id, /^iss_/)
        const bad = yield* call("POST", "/v1/issuers", {
          display_name: "Acme",
          support_url: "http://acme.example"
        })
        assert.strictEqual(bad.body.error.param, "support_url")
        assert.strictEqual((yield* call("DELETE", `/v1/issuers/${made.body.id}`)).status, 204)
        assert.strictEqual((yield* call("GET", `/v1/issuers/${made.body.id}`)).status, 404)
      })
    )
  })

  describe("payout addresses", () => {
    it.effect(
      "stores EIP-55 from lower case, refuses the zero address and address changes, disables but stays readable",
      () =>
        Effect.gen(function* () {
          const made = yield* call("POST", "/v1/payout-addresses", {
            address: "0x52908400098527886E0F7030069857D2E4169EE7".toLowerCase(),
            label: "treasury"
          })
          assert.strictEqual(made.status, 201)
          assert.strictEqual(made.body.address, "0x52908400098527886E0F7030069857D2E4169EE7")
          const zero = yield* call("POST", "/v1/payout-addresses", { address: `0x${"0".repeat(40)}` })
          assert.strictEqual(zero.body.error.param, "address")
          const change = yield* call("PATCH", `/v1/payout-addresses/${made.body.id}`, {
            address: `0x${"1".repeat(40)}`
          })
          assert.strictEqual(change.status, 400)
          assert.strictEqual(change.body.error.param, "address")
          const disabled = yield* call("POST", `/v1/payout-addresses/${made.body.id}/disable`)
          assert.strictEqual(disabled.status, 200)
          assert.match(disabled.body.disabled_at as string, /Z$/)
          assert.strictEqual(
            (yield* call("GET", `/v1/payout-addresses/${made.body.id}`)).body.disabled_at,
            disabled.body.disabled_at
          )
          const issuer = yield* call("POST", "/v1/issuers", { display_name: "Acme" })
          const refused = yield* call(
            "POST",
            "/v1/deposit-requests",
            { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: made.body.id },
            { "idempotency-key": randomUUID() }
          )
          assert.strictEqual(refused.status, 400)
          assert.strictEqual(refused.body.error.param, "payout_address_id")
        })
    )
  })
})
