import { randomUUID } from "node:crypto"
import { OpenApi } from "@effect/platform"
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import { v7 } from "uuid"
import { Api } from "../../../src/http/Api"
import type { MerchantClient } from "../../support/Api"
import { pause } from "../../support/eventually"
import { Sandbox, sandboxCall, sandboxLayer } from "../../support/Sandbox"
import { newMerchantClient, scopedPgClient } from "../../support/scopedResources"

type Body = Record<string, unknown> & {
  id: string
  error: { code: string; message: string; param?: string }
}
type Page = Record<string, unknown> & { next_cursor: string | null }

/** A connection to the service's database, to look at rows the API no longer shows. */
class Db extends Context.Tag("test/Db")<Db, pg.Client>() {}

const ServiceLive = Layer.provideMerge(
  Layer.scoped(
    Db,
    Effect.flatMap(Sandbox, ({ service }) => scopedPgClient(service.databaseUrl))
  ),
  sandboxLayer(() => ({ config: { rateLimitCapacity: 100_000 } }))
)

/** A JSON call as the sandbox's merchant. */
const call = <T = Body>(...args: Parameters<MerchantClient["call"]>) => sandboxCall<T>(...args)
const query = (text: string, values: Array<unknown>) =>
  Effect.flatMap(Db, (db) => Effect.promise(() => db.query(text, values)))

const SECOND_PRECISION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/
const CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7"
let addressCounter = 1
/** A fresh non-zero address, lowercase (the service checksums it). */
const nextAddress = () => `0x${(addressCounter++).toString(16).padStart(40, "a")}`

const assertInvalid = (res: { status: number; body: Body }, param?: string) => {
  assert.strictEqual(res.status, 400, JSON.stringify(res.body))
  assert.strictEqual(res.body.error.code, "invalid_request")
  if (param !== undefined)
    assert.match(res.body.error.param ?? "", new RegExp(`^${param}`), JSON.stringify(res.body))
}
const assertNotFound = (res: { status: number; body: Body }, code: string) => {
  assert.strictEqual(res.status, 404, JSON.stringify(res.body))
  assert.strictEqual(res.body.error.code, code)
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
type Resource = (typeof resources)[number]

/** An account of its own with 25 records of one resource, so its list holds exactly these. */
class Listed extends Context.Tag("test/Listed")<
  Listed,
  { readonly own: MerchantClient; readonly made: ReadonlyArray<string> }
>() {}

const listedLayer = (r: Resource) =>
  Layer.effect(
    Listed,
    Effect.gen(function* () {
      const { service } = yield* Sandbox
      const own = yield* newMerchantClient(service)
      const made: Array<string> = []
      for (let i = 0; i < 25; i++) {
        const res = yield* Effect.promise(() => own.call<Body>("POST", r.path, r.minimal()))
        assert.strictEqual(res.status, 201)
        made.push(res.body.id)
      }
      return { own, made }
    })
  )

layer(ServiceLive, { timeout: 60_000 })((it) => {
  for (const r of resources) {
    describe(`${r.name}: shared rules`, () => {
      const create = (extra: Record<string, unknown> = {}) =>
        call("POST", r.path, { ...r.minimal(), ...extra })

      it.effect(
        "creates with 201, a prefixed id, empty metadata by default, second-precision timestamps",
        () =>
          Effect.gen(function* () {
            const made = yield* create()
            assert.strictEqual(made.status, 201)
            assert.match(
              made.body.id,
              new RegExp(`^${r.prefix}_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)
            )
            assert.deepStrictEqual(made.body.metadata, {})
            assert.isNull(made.body[r.nullable])
            assert.match(made.body.created_at as string, SECOND_PRECISION)
            assert.match(made.body.updated_at as string, SECOND_PRECISION)
            const read = yield* call("GET", `${r.path}/${made.body.id}`)
            assert.strictEqual(read.status, 200)
            assert.deepStrictEqual(read.body, made.body)
          })
      )

      it.effect(
        "rejects unknown fields, wrong types, malformed JSON, a missing JSON content type and control characters",
        () =>
          Effect.gen(function* () {
            const { service, merchant } = yield* Sandbox
            assertInvalid(yield* create({ surprise: 1 }), "surprise")
            assertInvalid(yield* create({ metadata: "x" }), "metadata")
            assertInvalid(yield* create({ [r.nullable]: 42 }), r.nullable)
            assertInvalid(yield* call("POST", r.path, "{not json"))
            assertInvalid(yield* call("POST", r.path, "[]"))
            const plain = yield* Effect.promise(() =>
              service.request(r.path, {
                method: "POST",
                headers: merchant.headers("api_key", { "content-type": "text/plain" }),
                body: JSON.stringify(r.minimal())
              })
            )
            assert.strictEqual(plain.status, 400)
            assertInvalid(yield* create({ [r.nullable]: "bell\u0007" }), r.nullable)
            // tab, LF and CR are text, kept as sent
            const kept = yield* create({ [r.nullable]: "line one\nline\ttwo\r" })
            assert.strictEqual(kept.status, 201)
            assert.strictEqual(kept.body[r.nullable], "line one\nline\ttwo\r")
          })
      )

      it.effect("refuses a body above 64 KiB with 413", () =>
        Effect.gen(function* () {
          const res = yield* call("POST", r.path, { ...r.minimal(), [r.nullable]: "x".repeat(70 * 1024) })
          assert.strictEqual(res.status, 413)
          assert.strictEqual(res.body.error.code, "payload_too_large")
        })
      )

      it.effect(
        "enforces the metadata rules: 50 keys of up to 40 characters, string values up to 500, no controls",
        () =>
          Effect.gen(function* () {
            const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key_${i}`, "v"]))
            const ok = yield* create({ metadata: { ...fifty } })
            assert.strictEqual(ok.status, 201)
            assert.deepStrictEqual(ok.body.metadata, fifty)
            assertInvalid(yield* create({ metadata: { ...fifty, one_more: "v" } }), "metadata")
            assert.strictEqual(
              (yield* create({ metadata: { ["k".repeat(40)]: "v".repeat(500) } })).status,
              201
            )
            assertInvalid(yield* create({ metadata: { ["k".repeat(41)]: "v" } }), "metadata")
            assertInvalid(yield* create({ metadata: { k: "v".repeat(501) } }), "metadata")
            assertInvalid(yield* create({ metadata: { k: 1 } }), "metadata")
            assertInvalid(yield* create({ metadata: { k: null } }), "metadata")
            assertInvalid(yield* create({ metadata: { k: { nested: "x" } } }), "metadata")
            assertInvalid(yield* create({ metadata: ["a"] }), "metadata")
            assertInvalid(yield* create({ metadata: { "bad\u0001key": "v" } }), "metadata")
            assertInvalid(yield* create({ metadata: { k: "bad\u001fvalue" } }), "metadata")
            // multi-byte text counts characters, and line breaks are allowed in values
            assert.strictEqual(
              (yield* create({ metadata: { note: "é".repeat(500), lines: "a\nb" } })).status,
              201
            )
          })
      )

      it.effect(
        "PATCH: omitted fields stay, null clears, metadata is replaced whole, updated_at moves, unknown fields refused",
        () =>
          Effect.gen(function* () {
            const made = yield* create({ [r.nullable]: r.nullableValue, metadata: { a: "1", b: "2" } })
            assert.strictEqual(made.status, 201)
            yield* pause(1100)
            const meta = yield* call("PATCH", `${r.path}/${made.body.id}`, { metadata: { c: "3" } })
            assert.strictEqual(meta.status, 200)
            assert.deepStrictEqual(meta.body.metadata, { c: "3" })
            assert.strictEqual(meta.body[r.nullable], r.nullableValue)
            assert.strictEqual(meta.body.created_at, made.body.created_at)
            assert.isAbove(
              Date.parse(meta.body.updated_at as string),
              Date.parse(made.body.updated_at as string)
            )

            const empty = yield* call("PATCH", `${r.path}/${made.body.id}`, {})
            assert.strictEqual(empty.status, 200)
            assert.deepStrictEqual({ ...empty.body, updated_at: null }, { ...meta.body, updated_at: null })

            const cleared = yield* call("PATCH", `${r.path}/${made.body.id}`, {
              [r.nullable]: null,
              metadata: null
            })
            assert.strictEqual(cleared.status, 200)
            assert.isNull(cleared.body[r.nullable])
            assert.deepStrictEqual(cleared.body.metadata, {})

            assertInvalid(yield* call("PATCH", `${r.path}/${made.body.id}`, { nope: true }), "nope")
            assertInvalid(yield* call("PATCH", `${r.path}/${made.body.id}`, { id: made.body.id }), "id")
            assertInvalid(
              yield* call("PATCH", `${r.path}/${made.body.id}`, { created_at: "2020-01-01T00:00:00Z" }),
              "created_at"
            )
            assertInvalid(
              yield* call("PATCH", `${r.path}/${made.body.id}`, { metadata: { k: "v".repeat(501) } }),
              "metadata"
            )
            // a refused patch changes nothing
            assert.deepStrictEqual((yield* call("GET", `${r.path}/${made.body.id}`)).body, cleared.body)
          })
      )

      it.effect(
        "answers 404 <resource>_not_found for malformed, bare, wrong-prefix and unknown path ids on every id route",
        () =>
          Effect.gen(function* () {
            const made = yield* create()
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
              assertNotFound(yield* call("GET", `${r.path}/${encodeURIComponent(id)}`), r.notFound)
              assertNotFound(
                yield* call("PATCH", `${r.path}/${encodeURIComponent(id)}`, { metadata: { k: "v" } }),
                r.notFound
              )
              const end =
                r.end === "DELETE"
                  ? yield* call("DELETE", `${r.path}/${encodeURIComponent(id)}`)
                  : yield* call("POST", `${r.path}/${encodeURIComponent(id)}/disable`)
              assertNotFound(end, r.notFound)
            }
            // none of the probes touched the real one
            assert.deepStrictEqual((yield* call("GET", `${r.path}/${made.body.id}`)).body, made.body)
          })
      )
    })
  }

  for (const r of resources) {
    it.layer(listedLayer(r), { timeout: 60_000 })(`${r.name}: lists`, (it) => {
      const page = (query = "") =>
        Effect.flatMap(Listed, ({ own }) =>
          Effect.promise(() => own.call<Page & { error: Body["error"] }>("GET", `${r.path}${query}`))
        )
      const ids = (p: Page) => (p[r.plural] as Array<{ id: string }>).map((x) => x.id)

      it.effect("envelopes under the plural name, newest first, 20 by default, with next_cursor", () =>
        Effect.gen(function* () {
          const { made } = yield* Listed
          const first = yield* page()
          assert.strictEqual(first.status, 200)
          assert.deepStrictEqual(Object.keys(first.body).sort(), [r.plural, "next_cursor"].sort())
          assert.deepStrictEqual(ids(first.body), [...made].reverse().slice(0, 20))
          assert.strictEqual(first.body.next_cursor, made[5])
        })
      )

      it.effect("walks every page with starting_after and ends with a null cursor", () =>
        Effect.gen(function* () {
          const { made } = yield* Listed
          const seen: Array<string> = []
          let cursor: string | null = null
          let pages = 0
          do {
            const res: { status: number; body: Page } = yield* page(
              `?limit=7${cursor ? `&starting_after=${cursor}` : ""}`
            )
            assert.strictEqual(res.status, 200)
            seen.push(...ids(res.body))
            cursor = res.body.next_cursor
            pages++
          } while (cursor !== null && pages < 10)
          assert.strictEqual(pages, 4)
          assert.deepStrictEqual(seen, [...made].reverse())
          const exact = yield* page("?limit=25")
          assert.lengthOf(ids(exact.body), 25)
          assert.isNull(exact.body.next_cursor)
          const hundred = yield* page("?limit=100")
          assert.strictEqual(hundred.status, 200)
          assert.isNull(hundred.body.next_cursor)
          const one = yield* page("?limit=1")
          assert.deepStrictEqual(ids(one.body), [made[24]])
          assert.strictEqual(one.body.next_cursor, made[24])
        })
      )

      it.effect(
        "refuses a limit outside 1..100 and a starting_after that is not a full id of this prefix",
        () =>
          Effect.gen(function* () {
            const { made } = yield* Listed
            for (const limit of ["0", "101", "-1", "1.5", "abc", ""]) {
              assertInvalid((yield* page(`?limit=${limit}`)) as never, "limit")
            }
            const uuid = made[10]!.slice(r.prefix.length + 1)
            const otherPrefix = r.prefix === "pa" ? "cus" : "pa"
            for (const cursor of [
              uuid,
              `${otherPrefix}_${uuid}`,
              `${r.prefix}_nope`,
              `${r.prefix}_${uuid.toUpperCase()}`
            ]) {
              assertInvalid(
                (yield* page(`?starting_after=${encodeURIComponent(cursor)}`)) as never,
                "starting_after"
              )
            }
          })
      )
    })
  }

  describe("customers", () => {
    it.effect("requires a name, validates the email, keeps the name unclearable", () =>
      Effect.gen(function* () {
        assertInvalid(yield* call("POST", "/v1/customers", {}), "name")
        assertInvalid(yield* call("POST", "/v1/customers", { name: "" }), "name")
        assertInvalid(yield* call("POST", "/v1/customers", { name: null }), "name")
        for (const email of ["not-an-email", "a@", "@b.example", "a b@c.example", "a@b@c.example", ""]) {
          assertInvalid(yield* call("POST", "/v1/customers", { name: "Ada", email }), "email")
        }
        const made = yield* call("POST", "/v1/customers", {
          name: "Ada Lovelace",
          email: "ada@example.com",
          description: "Analyst",
          metadata: { crm_id: "42" }
        })
        assert.strictEqual(made.status, 201)
        assert.deepInclude(made.body, {
          name: "Ada Lovelace",
          email: "ada@example.com",
          description: "Analyst",
          metadata: { crm_id: "42" }
        })
        assertInvalid(yield* call("PATCH", `/v1/customers/${made.body.id}`, { name: null }), "name")
        assertInvalid(yield* call("PATCH", `/v1/customers/${made.body.id}`, { email: "nope" }), "email")
        const patched = yield* call("PATCH", `/v1/customers/${made.body.id}`, {
          email: null,
          name: "Ada"
        })
        assert.deepInclude(patched.body, { name: "Ada", email: null, description: "Analyst" })
      })
    )

    it.effect(
      "deletes softly: 204, then 404 on read, patch and delete, gone from lists, row kept with deleted_at",
      () =>
        Effect.gen(function* () {
          const made = yield* call("POST", "/v1/customers", { name: "Temp" })
          const del = yield* call("DELETE", `/v1/customers/${made.body.id}`)
          assert.strictEqual(del.status, 204)
          assert.isNull(del.body)
          assertNotFound(yield* call("GET", `/v1/customers/${made.body.id}`), "customer_not_found")
          assertNotFound(
            yield* call("PATCH", `/v1/customers/${made.body.id}`, { name: "Back" }),
            "customer_not_found"
          )
          assertNotFound(yield* call("DELETE", `/v1/customers/${made.body.id}`), "customer_not_found")
          const list = yield* call<{ customers: Array<{ id: string }> }>("GET", "/v1/customers?limit=100")
          assert.notInclude(
            list.body.customers.map((c) => c.id),
            made.body.id
          )
          const row = yield* query("select name, deleted_at from customers where id = $1", [
            made.body.id.slice(4)
          ])
          assert.strictEqual(row.rows[0]?.name, "Temp")
          assert.instanceOf(row.rows[0]?.deleted_at, Date)
        })
    )
  })

  describe("issuers", () => {
    it.effect(
      "requires a display name of at most 100 characters and validates support email and https URL",
      () =>
        Effect.gen(function* () {
          assertInvalid(yield* call("POST", "/v1/issuers", {}), "display_name")
          assertInvalid(yield* call("POST", "/v1/issuers", { display_name: "" }), "display_name")
          assertInvalid(yield* call("POST", "/v1/issuers", { display_name: "x".repeat(101) }), "display_name")
          assert.strictEqual(
            (yield* call("POST", "/v1/issuers", { display_name: "x".repeat(100) })).status,
            201
          )
          for (const support_url of [
            "http://acme.example",
            "ftp://acme.example",
            "acme.example",
            "https://",
            "https://a b.example"
          ]) {
            assertInvalid(
              yield* call("POST", "/v1/issuers", { display_name: "Acme", support_url }),
              "support_url"
            )
          }
          assertInvalid(
            yield* call("POST", "/v1/issuers", { display_name: "Acme", support_email: "help" }),
            "support_email"
          )
          const made = yield* call("POST", "/v1/issuers", {
            display_name: "Acme",
            legal_name: "Acme Books Ltd",
            support_email: "help@acme.example",
            support_url: "https://acme.example/help",
            metadata: { region: "eu" }
          })
          assert.strictEqual(made.status, 201)
          assert.deepInclude(made.body, {
            display_name: "Acme",
            legal_name: "Acme Books Ltd",
            support_email: "help@acme.example",
            support_url: "https://acme.example/help",
            metadata: { region: "eu" }
          })
          assertInvalid(
            yield* call("PATCH", `/v1/issuers/${made.body.id}`, { display_name: null }),
            "display_name"
          )
          assertInvalid(
            yield* call("PATCH", `/v1/issuers/${made.body.id}`, { display_name: "y".repeat(101) }),
            "display_name"
          )
          assertInvalid(
            yield* call("PATCH", `/v1/issuers/${made.body.id}`, { support_url: "http://acme.example" }),
            "support_url"
          )
          const patched = yield* call("PATCH", `/v1/issuers/${made.body.id}`, {
            support_url: null,
            support_email: null,
            display_name: "Acme 2"
          })
          assert.deepInclude(patched.body, {
            display_name: "Acme 2",
            legal_name: "Acme Books Ltd",
            support_email: null,
            support_url: null,
            metadata: { region: "eu" }
          })
        })
    )

    it.effect(
      "deletes softly: 204, then 404, gone from lists, and a deleted issuer cannot back a new deposit request",
      () =>
        Effect.gen(function* () {
          const issuer = yield* call("POST", "/v1/issuers", { display_name: "Short-lived" })
          const payout = yield* call("POST", "/v1/payout-addresses", { address: nextAddress() })
          assert.strictEqual((yield* call("DELETE", `/v1/issuers/${issuer.body.id}`)).status, 204)
          assertNotFound(yield* call("GET", `/v1/issuers/${issuer.body.id}`), "issuer_not_found")
          assertNotFound(yield* call("DELETE", `/v1/issuers/${issuer.body.id}`), "issuer_not_found")
          const list = yield* call<{ issuers: Array<{ id: string }> }>("GET", "/v1/issuers?limit=100")
          assert.notInclude(
            list.body.issuers.map((c) => c.id),
            issuer.body.id
          )
          const row = yield* query("select deleted_at from issuers where id = $1", [issuer.body.id.slice(4)])
          assert.instanceOf(row.rows[0]?.deleted_at, Date)
          const refused = yield* call(
            "POST",
            "/v1/deposit-requests",
            { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: payout.body.id },
            { "idempotency-key": randomUUID() }
          )
          assert.isAtLeast(refused.status, 400)
          assert.isBelow(refused.status, 500)
        })
    )
  })

  describe("payout addresses", () => {
    it.effect(
      "accepts one-case and checksummed spellings and answers EIP-55; refuses the zero address, checksum typos and malformed addresses",
      () =>
        Effect.gen(function* () {
          for (const input of [
            CHECKSUMMED.toLowerCase(),
            `0x${CHECKSUMMED.slice(2).toUpperCase()}`,
            CHECKSUMMED
          ]) {
            const made = yield* call("POST", "/v1/payout-addresses", { address: input })
            assert.strictEqual(made.status, 201)
            assert.strictEqual(made.body.address, CHECKSUMMED)
            assert.isNull(made.body.disabled_at)
          }
          for (const address of [
            `0x${"0".repeat(40)}`,
            `0X${"0".repeat(40)}`,
            "0x1234",
            `0x${"g".repeat(40)}`,
            CHECKSUMMED.slice(2),
            `${CHECKSUMMED}00`,
            // One letter's case off the checksum: a typo, never re-checksummed into the address it resembles.
            `${CHECKSUMMED.slice(0, -2)}e7`,
            ""
          ]) {
            assertInvalid(yield* call("POST", "/v1/payout-addresses", { address }), "address")
          }
          assertInvalid(yield* call("POST", "/v1/payout-addresses", {}), "address")
          assertInvalid(yield* call("POST", "/v1/payout-addresses", { address: 5 }), "address")
        })
    )

    it.effect(
      "PATCH changes only label and metadata; sending address (even the same one) is 400 naming address",
      () =>
        Effect.gen(function* () {
          const made = yield* call("POST", "/v1/payout-addresses", { address: CHECKSUMMED, label: "main" })
          for (const address of [nextAddress(), CHECKSUMMED, null]) {
            const res = yield* call("PATCH", `/v1/payout-addresses/${made.body.id}`, {
              address,
              label: "x"
            })
            assertInvalid(res, "address")
            assert.match(res.body.error.message, /address/)
          }
          const patched = yield* call("PATCH", `/v1/payout-addresses/${made.body.id}`, {
            label: "renamed",
            metadata: { desk: "ops" }
          })
          assert.strictEqual(patched.status, 200)
          assert.deepInclude(patched.body, {
            address: CHECKSUMMED,
            label: "renamed",
            metadata: { desk: "ops" }
          })
          const cleared = yield* call("PATCH", `/v1/payout-addresses/${made.body.id}`, { label: null })
          assert.deepInclude(cleared.body, { address: CHECKSUMMED, label: null, metadata: { desk: "ops" } })
          assertInvalid(
            yield* call("PATCH", `/v1/payout-addresses/${made.body.id}`, {
              disabled_at: "2020-01-01T00:00:00Z"
            }),
            "disabled_at"
          )
        })
    )

    it.effect(
      "disables with 200 and disabled_at; stays readable, listed and patchable; disabling again keeps the first time",
      () =>
        Effect.gen(function* () {
          const made = yield* call("POST", "/v1/payout-addresses", { address: nextAddress() })
          const disabled = yield* call("POST", `/v1/payout-addresses/${made.body.id}/disable`)
          assert.strictEqual(disabled.status, 200)
          assert.match(disabled.body.disabled_at as string, SECOND_PRECISION)
          assert.strictEqual(disabled.body.address, made.body.address)
          const read = yield* call("GET", `/v1/payout-addresses/${made.body.id}`)
          assert.strictEqual(read.status, 200)
          assert.strictEqual(read.body.disabled_at, disabled.body.disabled_at)
          const list = yield* call<{ payout_addresses: Array<{ id: string; disabled_at: string | null }> }>(
            "GET",
            "/v1/payout-addresses?limit=100"
          )
          assert.strictEqual(
            list.body.payout_addresses.find((p) => p.id === made.body.id)?.disabled_at,
            disabled.body.disabled_at
          )
          yield* pause(1100)
          const again = yield* call("POST", `/v1/payout-addresses/${made.body.id}/disable`)
          assert.strictEqual(again.status, 200)
          assert.strictEqual(again.body.disabled_at, disabled.body.disabled_at)
          const relabelled = yield* call("PATCH", `/v1/payout-addresses/${made.body.id}`, { label: "old" })
          assert.strictEqual(relabelled.status, 200)
          assert.strictEqual(relabelled.body.disabled_at, disabled.body.disabled_at)
          // payout addresses are disabled, never deleted
          assert.strictEqual((yield* call("DELETE", `/v1/payout-addresses/${made.body.id}`)).status, 405)
        })
    )

    it.effect("refuses a disabled payout address for a new deposit request, naming payout_address_id", () =>
      Effect.gen(function* () {
        const issuer = yield* call("POST", "/v1/issuers", { display_name: "Acme" })
        const payout = yield* call("POST", "/v1/payout-addresses", { address: nextAddress() })
        const usable = yield* call(
          "POST",
          "/v1/deposit-requests",
          { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: payout.body.id },
          { "idempotency-key": randomUUID() }
        )
        assert.strictEqual(usable.status, 201)
        assert.strictEqual(
          (yield* call("POST", `/v1/payout-addresses/${payout.body.id}/disable`)).status,
          200
        )
        const refused = yield* call(
          "POST",
          "/v1/deposit-requests",
          { amount: "1.000000", issuer_id: issuer.body.id, payout_address_id: payout.body.id },
          { "idempotency-key": randomUUID() }
        )
        assertInvalid(refused, "payout_address_id")
      })
    )
  })
})

// The published description alone: no service needed.
describe("the OpenAPI description", () => {
  const spec = OpenApi.fromApi(Api) as unknown as {
    paths: Record<string, Record<string, unknown>>
    components: { schemas: Record<string, { description?: string }> }
  }

  it("has every merchant resource route", () => {
    const methods = (path: string) => Object.keys(spec.paths[path] ?? {}).sort()
    assert.deepStrictEqual(methods("/v1/customers"), ["get", "post"])
    assert.deepStrictEqual(methods("/v1/customers/{id}"), ["delete", "get", "patch"])
    assert.deepStrictEqual(methods("/v1/issuers"), ["get", "post"])
    assert.deepStrictEqual(methods("/v1/issuers/{id}"), ["delete", "get", "patch"])
    assert.deepStrictEqual(methods("/v1/payout-addresses"), ["get", "post"])
    assert.deepStrictEqual(methods("/v1/payout-addresses/{id}"), ["get", "patch"])
    assert.deepStrictEqual(methods("/v1/payout-addresses/{id}/disable"), ["post"])
  })

  it("documents the metadata limits, control characters included, on the Metadata schema", () => {
    const metadata = spec.components.schemas.Metadata as {
      description?: string
      maxProperties?: number
      propertyNames?: { maxLength?: number }
      patternProperties?: Record<string, { maxLength?: number }>
    }
    assert.strictEqual(metadata.maxProperties, 50)
    assert.strictEqual(metadata.propertyNames?.maxLength, 40)
    assert.strictEqual(Object.values(metadata.patternProperties ?? {})[0]?.maxLength, 500)
    assert.match(metadata.description ?? "", /50 pairs/)
    assert.match(metadata.description ?? "", /1–40 characters/)
    assert.match(metadata.description ?? "", /500 characters/)
    assert.match(metadata.description ?? "", /control characters/)
  })
})
