import SwaggerParser from "@apidevtools/swagger-parser"
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { describe, expect, it } from "vitest"
import {
  MAX_AMOUNT_BASE_UNITS,
  REQUESTED_AMOUNT_PATTERN,
  formatAmount
} from "../../../services/domain/Amount"
import { rfc3339Pattern } from "../../../services/domain/Timestamp"
import { TEXT_PATTERN, textProblem } from "../../../services/domain/Text"
import { servedDocument } from "../../../src/client/generateTypes"
import { integerRangePattern } from "../../../src/http/Schemas"

/**
 * Issue 51: the document third-party tools load whole. Ajv 2020 in strict mode compiles every component schema
 * (strict also refuses keywords without their type, unknown keywords and `required` names no schema defines);
 * swagger-parser validates the document against the OpenAPI 3.1 schema and resolves every reference.
 */
type Json = Record<string, unknown>
const document = () =>
  JSON.parse(JSON.stringify(servedDocument())) as Json & {
    paths: Record<string, Record<string, Json & { security?: Array<Json>; responses: Record<string, Json> }>>
    components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> }
  }

/** Ajv over the whole document: `components` is the document's container, not a schema keyword. */
const strictAjv = (doc: Json) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  addFormats(ajv)
  ajv.addKeyword({ keyword: "components" })
  ajv.addSchema({ $id: "openapi.json", components: doc.components })
  return ajv
}

const ids = (node: unknown, out: Array<string> = []): Array<string> => {
  if (Array.isArray(node)) for (const item of node) ids(item, out)
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$id" && typeof value === "string") out.push(value)
      else ids(value, out)
    }
  }
  return out
}

describe("the OpenAPI document, exactly", () => {
  it("has no $id at all, so no two schemas claim the same one", () => {
    expect(ids(document())).toEqual([])
  })

  it("compiles every component schema in Ajv 2020 strict mode", () => {
    const doc = document()
    const ajv = strictAjv(doc)
    const refused: Array<string> = []
    for (const name of Object.keys(doc.components.schemas)) {
      try {
        ajv.getSchema(`openapi.json#/components/schemas/${name}`)
      } catch (error) {
        refused.push(`${name}: ${String(error)}`)
      }
    }
    expect(refused).toEqual([])
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(100)
  })

  it("compiles every request and response schema of every operation in strict mode", () => {
    const doc = document()
    const ajv = strictAjv(doc)
    const refused: Array<string> = []
    let compiled = 0
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const bodies = [
          (op.requestBody as { content?: Record<string, { schema: Json }> } | undefined)?.content,
          ...Object.values(op.responses).map(
            (r) => (r as { content?: Record<string, { schema: Json }> }).content
          )
        ].flatMap((content) => Object.values(content ?? {}).map((c) => c.schema))
        const parameters = ((op.parameters ?? []) as Array<{ schema: Json }>).map((p) => p.schema)
        for (const schema of [...bodies, ...parameters]) {
          try {
            // An operation's schema refers to components from the document's root.
            ajv.compile(
              JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'))
            )
            compiled++
          } catch (error) {
            refused.push(`${method.toUpperCase()} ${path}: ${String(error)}`)
          }
        }
      }
    }
    expect(refused).toEqual([])
    expect(compiled).toBeGreaterThan(500)
  })

  it("is refused by the same check when a duplicated $id comes back (the check can fail)", () => {
    const doc = document()
    doc.components.schemas.A = { $id: "/schemas/unknown" }
    doc.components.schemas.B = { $id: "/schemas/unknown" }
    expect(() => strictAjv(doc)).toThrow(/resolves to more than one schema/)
  })

  it("validates in swagger-parser, every reference resolved", async () => {
    const api = (await SwaggerParser.validate(document() as never)) as unknown as { openapi: string }
    expect(api.openapi).toBe("3.1.0")
    const broken = document()
    ;(broken.paths["/v1/health"]!.get!.responses as Json)["200"] = { $ref: "#/components/responses/Nope" }
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow()
  })

  it("names API keys and sessions apart; session-only routes name only the session", () => {
    const doc = document()
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["api_key", "session"])
    const sessionOnly = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => JSON.stringify(op.security) === JSON.stringify([{ session: [] }]))
        .map(([method]) => `${method.toUpperCase()} ${path}`)
    )
    expect(sessionOnly).toEqual(
      expect.arrayContaining([
        "POST /v1/account/api-key",
        "GET /v1/account/audit-log",
        "POST /v1/deposit-requests/{id}/resume",
        "GET /v1/account/members"
      ])
    )
    expect(doc.paths["/v1/deposit-requests"]!.post!.security).toEqual([{ api_key: [] }, { session: [] }])
    expect(doc.paths["/v1/health"]!.get!.security).toEqual([])
  })

  it("declares the answer headers on every response", () => {
    const doc = document()
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item))
        for (const response of Object.values(op.responses))
          expect(Object.keys((response as { headers?: Json }).headers ?? {})).toContain("X-Request-Id")
    const create = doc.paths["/v1/deposit-requests"]!.post!.responses
    expect(Object.keys((create["200"] as { headers: Json }).headers)).toEqual(
      expect.arrayContaining([
        "Idempotency-Replayed",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset"
      ])
    )
    expect(Object.keys((create["429"] as { headers: Json }).headers)).toContain("Retry-After")
    expect(Object.keys((create["401"] as { headers: Json }).headers)).toContain("WWW-Authenticate")
  })
})

describe("the patterns the document carries agree with the service's own checks", () => {
  const matches = (pattern: string, s: string) => new RegExp(pattern, "u").test(s)

  it("amounts: above zero, at most the maximum, six fractional digits", () => {
    for (const [s, ok] of [
      ["0.000000", false],
      ["0.000001", true],
      ["1.5", false],
      ["01.000000", false],
      [formatAmount(MAX_AMOUNT_BASE_UNITS), true],
      [formatAmount(MAX_AMOUNT_BASE_UNITS + 1n), false],
      [formatAmount(MAX_AMOUNT_BASE_UNITS - 1n), true],
      ["25.000000", true]
    ] as const)
      expect([s, matches(REQUESTED_AMOUNT_PATTERN, s)]).toEqual([s, ok])
  })

  it("text: C0 controls but tab, LF and CR refused, as textProblem says", () => {
    for (let code = 0; code < 0x30; code++) {
      const s = `a${String.fromCharCode(code)}b`
      expect([code, matches(TEXT_PATTERN, s)]).toEqual([code, textProblem(s) === undefined])
    }
    expect(matches(TEXT_PATTERN, "\ud83d\ude00 ok")).toBe(true)
    expect(matches(TEXT_PATTERN, "lone \ud800")).toBe(false)
  })

  it("timestamps: the calendar, as Date and the list bounds read it", () => {
    expect(matches(rfc3339Pattern(false), "2028-02-29T00:00:00Z")).toBe(true)
    expect(matches(rfc3339Pattern(false), "2026-02-29T00:00:00Z")).toBe(false)
    expect(matches(rfc3339Pattern(false), "2026-01-01T24:00:00Z")).toBe(false)
    expect(matches(rfc3339Pattern(false), "2026-01-01t00:00:00z")).toBe(false)
    expect(matches(rfc3339Pattern(true), "2026-01-01t00:00:00z")).toBe(true)
  })

  it("integer ranges: exactly min to max in plain digits", () => {
    for (const [min, max] of [
      [1, 100],
      [1, 30],
      [0, 999_999_999],
      [13, 4567]
    ] as const) {
      for (let n = 0; n < 5000; n++)
        expect(matches(integerRangePattern(min, max), String(n))).toBe(n >= min && n <= max)
      for (const s of ["01", "+1", "1e1", " 1", "1.0", ""])
        expect(matches(integerRangePattern(min, max), s)).toBe(false)
    }
  })
})
