import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { codesOf, docUrlOf, errorTable, RequestTimeout } from "../../../src/http/Errors"
import { errorBody } from "../../../src/http/middleware/ErrorBody"
import { HOME_CSP } from "../../../src/web/home/HomeRoute"
import { createMerchant, type Merchant } from "../../support/Merchant"
import type { RunningService } from "../../support/Service"
import { scopedService } from "../../support/scopedResources"

// Issue 48, item 7 (decision 0087): every error answer carries `error.doc_url`, the line of its code on the
// service's errors page (`PUBLIC_BASE_URL/docs/errors#code`), and that page has a line for every code of the table.

class Running extends Context.Tag("test/Running")<
  Running,
  { readonly service: RunningService; readonly merchant: Merchant; readonly page: string }
>() {}

const RunningLive = Layer.scoped(
  Running,
  Effect.gen(function* () {
    const service = yield* scopedService()
    const merchant = yield* Effect.promise(() => createMerchant(service.databaseUrl))
    const res = yield* Effect.promise(() => service.request("/docs/errors"))
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("content-type"), "text/html; charset=utf-8")
    assert.strictEqual(res.headers.get("content-security-policy"), HOME_CSP)
    return { service, merchant, page: yield* Effect.promise(() => res.text()) }
  })
)

/** The ids of the page's elements, each as often as it occurs. */
const idsOf = (html: string) => [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!)

type Envelope = { error: { code: string; doc_url: string }; request_id: string }

const zeros = "00000000-0000-0000-0000-000000000000"

layer(RunningLive, { timeout: 120_000 })((it) => {
  describe("error codes link to their line in the docs", () => {
    it.effect("serves a page with one anchored line per code of the table, with its status", () =>
      Effect.gen(function* () {
        const { page } = yield* Running
        const ids = idsOf(page)
        assert.isAbove(errorTable.length, 20)
        for (const row of errorTable) {
          assert.strictEqual(ids.filter((id) => id === row.code).length, 1, `one line for ${row.code}`)
          // The line is the code's table row: its status and what to do are on it.
          const line = page.slice(
            page.indexOf(`id="${row.code}"`),
            page.indexOf("</tr>", page.indexOf(`id="${row.code}"`))
          )
          assert.include(line, `<td class="num">${row.status}</td>`)
          assert.isAbove(row.fix.length, 20, `${row.code} says what to do`)
        }
        assert.notInclude(page, "<script")
        assert.notInclude(page, "style=")
      })
    )

    it.effect("gives every code's envelope a doc_url whose anchor is on the served page", () =>
      Effect.gen(function* () {
        const { service, page } = yield* Running
        const ids = new Set(idsOf(page))
        const codes = new Set(Object.values(codesOf).flat())
        assert.strictEqual(codes.size, errorTable.length)
        for (const code of codes) {
          const url = new URL(docUrlOf(service.baseUrl, code))
          assert.strictEqual(`${url.origin}${url.pathname}`, `${service.baseUrl}/docs/errors`)
          assert.isTrue(ids.has(url.hash.slice(1)), `${code}'s anchor is on the page`)
        }
      })
    )

    it.effect("answers real refusals with the doc_url of their code", () =>
      Effect.gen(function* () {
        const { service, merchant, page } = yield* Running
        const ids = new Set(idsOf(page))
        const json = { "content-type": "application/json" }
        const cases: ReadonlyArray<readonly [string, string, RequestInit]> = [
          [
            "invalid_request",
            "/v1/customers",
            { method: "POST", headers: merchant.headers("api_key", json), body: "{" }
          ],
          ["unauthenticated", "/v1/customers", { method: "GET" }],
          [
            "identity_unauthorized",
            "/v1/account/api-key",
            { method: "POST", headers: merchant.headers("api_key") }
          ],
          [
            "deposit_request_not_found",
            `/v1/deposit-requests/dr_${zeros}`,
            { headers: merchant.headers("api_key") }
          ],
          ["route_not_found", "/v1/nowhere", {}],
          ["method_not_allowed", "/v1/health", { method: "DELETE" }],
          [
            "payload_too_large",
            "/v1/customers",
            {
              method: "POST",
              headers: merchant.headers("api_key", json),
              body: JSON.stringify({ name: "x".repeat(70_000) })
            }
          ]
        ]
        for (const [code, path, init] of cases) {
          const res = yield* Effect.promise(() => service.request(path, init))
          const body = (yield* Effect.promise(() => res.json())) as Envelope
          assert.strictEqual(body.error.code, code, path)
          assert.strictEqual(body.error.doc_url, `${service.baseUrl}/docs/errors#${code}`)
          assert.isTrue(ids.has(new URL(body.error.doc_url).hash.slice(1)))
        }
      })
    )

    it("renders the edge's own answers (no handler, no framework) with the doc_url too", () => {
      const body = errorBody(new RequestTimeout({ message: "late" }), "r", "https://pay.example.com")
      assert.deepStrictEqual(body, {
        error: {
          code: "request_timeout",
          message: "late",
          doc_url: "https://pay.example.com/docs/errors#request_timeout"
        },
        request_id: "r"
      })
    })
  })
})
