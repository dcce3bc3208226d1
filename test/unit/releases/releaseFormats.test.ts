import { describe, expect, it } from "@effect/vitest"
import Ajv from "ajv"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"

import { readFileSync } from "node:fs"
import { join } from "node:path"
import { previousRelease } from "../../chaos/Release"
import { FORMATS_DIRECTORY, type ReleaseFormats, STREAM_FORMATS } from "../../support/releaseFormats"

/**
 * Issue 47: during a rolling upgrade the previous release and this one share the streams, so each must read every
 * message the other writes. The previous release's formats are recorded in test/fixtures/formats/<version>.json
 * (its JSON Schemas and messages it wrote), and checked both ways against this checkout's schemas.
 */
const previous = previousRelease()
const recorded: ReleaseFormats = JSON.parse(
  readFileSync(join(FORMATS_DIRECTORY, `${previous.version}.json`), "utf8")
)

/**
 * The decoders ignore properties they do not know (Effect's default), so a field one release adds is no harm to the
 * other: the recorded schemas' `additionalProperties: false` is not what the reader enforces.
 */
const asReaderSees = (schema: unknown): unknown =>
  Array.isArray(schema)
    ? schema.map(asReaderSees)
    : typeof schema === "object" && schema !== null
      ? Object.fromEntries(
          Object.entries(schema)
            .filter(([key, value]) => !(key === "additionalProperties" && value === false))
            .map(([key, value]) => [key, asReaderSees(value)])
        )
      : schema

describe(`stream formats across ${previous.version} and this checkout`, () => {
  it("records the previous release's formats, one per stream this checkout reads", () => {
    expect(recorded.version).toBe(previous.version)
    expect(Object.keys(recorded.schemas).sort()).toEqual(Object.keys(STREAM_FORMATS).sort())
  })

  for (const [name, schema] of Object.entries(STREAM_FORMATS)) {
    it(`${name}: every message the previous release wrote decodes here`, () => {
      const decode = Schema.decodeUnknownEither(schema)
      for (const sample of recorded.samples[name] ?? []) expect(Either.isRight(decode(sample))).toBe(true)
      expect((recorded.samples[name] ?? []).length).toBeGreaterThan(0)
    })

    it(`${name}: every message this checkout writes is one the previous release reads`, () => {
      const ajv = new Ajv({ strict: false })
      const readsIt = ajv.compile(asReaderSees(recorded.schemas[name]) as object)
      fc.assert(
        fc.property(Arbitrary.make(schema), (message) => {
          const sent = JSON.parse(JSON.stringify(Schema.encodeSync(schema)(message)))
          // Only what survives JSON can travel (an infinite number cannot): what this checkout reads back itself.
          fc.pre(Either.isRight(Schema.decodeUnknownEither(schema)(sent)))
          if (!readsIt(sent))
            throw new Error(`the previous release refuses it: ${ajv.errorsText(readsIt.errors)}`)
        }),
        { numRuns: 300, seed: 47 }
      )
    })
  }

  it("the check can fail: a message without a field the previous release requires is refused", () => {
    const readsIt = new Ajv({ strict: false }).compile(
      asReaderSees(recorded.schemas["webhook-jobs"]) as object
    )
    expect(readsIt({ job_id: "j", endpoint_id: "e" })).toBe(false)
    expect(readsIt({ job_id: "j", endpoint_id: "e", publication: 1, added_later: true })).toBe(true)
  })
})
