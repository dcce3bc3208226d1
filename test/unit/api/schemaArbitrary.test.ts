import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { servedDocument } from "../../../src/client/generateTypes"
import {
  applyMutation,
  arbitraryOf,
  boundedFilter,
  type JsonSchema,
  type MutationKind,
  mutationsOf,
  type SchemaContext
} from "../../support/SchemaArbitrary"

/**
 * The generator test/integration/api/contractAgreement.test.ts draws requests with: its values are mostly what the
 * schema accepts (Ajv 2020 decides), bounded in size and time, and its mutations are mostly what the schema
 * refuses, so the two-way property is not filtering its way to nothing (or for ever).
 */
type Json = Record<string, unknown>
const doc = JSON.parse(JSON.stringify(servedDocument())) as Json & {
  paths: Record<string, Record<string, Json>>
  components: { schemas: Record<string, JsonSchema> }
}
const ctx: SchemaContext = { schemas: doc.components.schemas, maxDepth: 3 }
const ajv = new Ajv2020({ strict: true })
addFormats(ajv)
ajv.addKeyword({ keyword: "components" })
ajv.addSchema({ $id: "openapi.json", components: doc.components })
const compile = (schema: JsonSchema) =>
  ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/')))

/** Every request schema of the document: each parameter's and each JSON body's, by where it is. */
const requestSchemas = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).flatMap(([method, op]) => {
    const where = `${method.toUpperCase()} ${path}`
    const parameters = ((op.parameters ?? []) as Array<{ name: string; schema: JsonSchema }>).map(
      (p) => [`${where} ${p.name}`, p.schema] as const
    )
    const body = (op.requestBody as { content: Record<string, { schema: JsonSchema }> } | undefined)?.content[
      "application/json"
    ]?.schema
    return body === undefined ? parameters : [...parameters, [`${where} body`, body] as const]
  })
)

describe("values drawn from the document's request schemas", () => {
  it("are mostly accepted by Ajv, small, and drawn quickly, for every schema", () => {
    expect(requestSchemas.length).toBeGreaterThan(150)
    const poor: Array<string> = []
    for (const [where, schema] of requestSchemas) {
      const validate = compile(schema)
      const started = performance.now()
      const values = fc.sample(arbitraryOf(schema, ctx), { numRuns: 60, seed: 51 })
      const elapsed = performance.now() - started
      const accepted = values.filter((v) => validate(v)).length
      const largest = Math.max(...values.map((v) => JSON.stringify(v)?.length ?? 0))
      // One in six is plenty for a filter; `\s*` around an id (which trim allows) draws many refused controls.
      if (accepted < 10 || largest > 64 * 1024 || elapsed > 2_000)
        poor.push(`${where}: ${accepted}/60 accepted, largest ${largest} B, ${elapsed.toFixed(0)} ms`)
    }
    expect(poor).toEqual([])
  })

  it("reach the edges: the longest string and the largest array a schema allows", () => {
    const text = { type: "string", maxLength: 200, pattern: "^[^\\u0000-\\u0008]*$" }
    const lengths = fc
      .sample(arbitraryOf(text, ctx), { numRuns: 300, seed: 1 })
      .map((s) => [...(s as string)].length)
    expect(lengths).toContain(200)
    expect(Math.max(...lengths)).toBe(200)
    const list = { type: "array", items: { type: "integer", minimum: 0, maximum: 9 }, maxItems: 10 }
    expect(
      fc.sample(arbitraryOf(list, ctx), { numRuns: 300, seed: 1 }).map((a) => (a as []).length)
    ).toContain(10)
  })

  it("keep to enum, const, integer bounds, nullable branches and closed objects", () => {
    const schema = {
      type: "object",
      required: ["kind", "n"],
      properties: {
        kind: { type: "string", enum: ["a", "b"] },
        fixed: { const: 7 },
        n: { type: "integer", minimum: 100, maximum: 599 },
        maybe: { anyOf: [{ type: "string", pattern: "^\\d{6}$" }, { type: "null" }] },
        gone: { not: {} }
      },
      additionalProperties: false
    }
    const validate = compile(schema)
    for (const value of fc.sample(arbitraryOf(schema, ctx), { numRuns: 500, seed: 2 })) {
      expect(validate(value)).toBe(true)
      expect(value).not.toHaveProperty("gone")
    }
  })

  it("end on a recursive schema (any JSON value) and on a narrow integer range", () => {
    const values = fc.sample(arbitraryOf({ $ref: "#/components/schemas/JsonValue" }, ctx), {
      numRuns: 300,
      seed: 3
    })
    const depth = (v: unknown): number =>
      v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v).map(depth)) : 0
    expect(Math.max(...values.map(depth))).toBeLessThanOrEqual(6)
    // A filter over the whole safe range kept to 100..599 never ended: the stall the first attempt met.
    const narrow = fc.sample(arbitraryOf({ type: "integer", minimum: 100, maximum: 599 }, ctx), {
      numRuns: 500
    })
    expect(narrow.every((n) => (n as number) >= 100 && (n as number) <= 599)).toBe(true)
  })

  it("refuse a keyword they do not understand rather than guess", () => {
    expect(() => arbitraryOf({ type: "string", contentSchema: {} }, ctx)).toThrow(/unsupported keyword/)
  })

  it("stop with an error, not a hang, when a filter never passes", () => {
    expect(() =>
      fc.sample(
        boundedFilter(fc.integer(), () => false, "never"),
        1
      )
    ).toThrow(/2000 candidates/)
  })
})

describe("mutations of accepted bodies", () => {
  it("are mostly refused by Ajv, and every kind is refused somewhere", () => {
    const refusedKinds = new Set<MutationKind>()
    const poor: Array<string> = []
    for (const [where, schema] of requestSchemas.filter(([w]) => w.endsWith(" body"))) {
      const validate = compile(schema)
      const bodies = fc.sample(arbitraryOf(schema, ctx), { numRuns: 20, seed: 4 }).filter((b) => validate(b))
      let tried = 0
      let refused = 0
      for (const body of bodies) {
        for (const mutation of mutationsOf(body, schema, ctx)) {
          tried++
          if (!validate(applyMutation(body, mutation))) {
            refused++
            refusedKinds.add(mutation.kind)
          }
        }
      }
      if (bodies.length === 0 || refused < tried / 3) poor.push(`${where}: ${refused}/${tried} refused`)
    }
    expect(poor).toEqual([])
    expect([...refusedKinds].sort()).toEqual(
      expect.arrayContaining([
        "control_character",
        "extra_property",
        "missing_required",
        "not_an_integer",
        "out_of_range",
        "pattern_broken",
        "too_long",
        "too_many_items",
        "wrong_type"
      ])
    )
  })

  it("leave the accepted value as it was", () => {
    const body = { a: { b: [1, 2] } }
    const changed = applyMutation(body, { kind: "wrong_type", path: ["a", "b", 0], replacement: "x" })
    expect(changed).toEqual({ a: { b: ["x", 2] } })
    expect(body).toEqual({ a: { b: [1, 2] } })
    expect(
      applyMutation(body, { kind: "missing_required", path: ["a", "b"], replacement: undefined })
    ).toEqual({
      a: {}
    })
  })
})
