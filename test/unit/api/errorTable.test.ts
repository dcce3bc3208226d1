import { readFileSync } from "node:fs"
import { HttpApiSchema } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { AllErrors, codesOf, errorTable, errorTableMarkdown, statusOf } from "../../../src/http/Errors"
import { idPrefixes } from "../../../services/domain/PrefixedId"

const sample = (ErrorClass: (typeof AllErrors)[number]) =>
  new ErrorClass({ message: "x", allow: [], resource: "deposit_request" } as never)

describe("the error table", () => {
  it("is the README's table, to the letter", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const section = readme.split("<!-- errors:start -->")[1]?.split("<!-- errors:end -->")[0]?.trim()
    expect(section).toBe(errorTableMarkdown())
  })

  it("documents every error class with its status, and one not-found code per id prefix", () => {
    const documented = new Set(errorTable.map((e) => `${e.status} ${e.code}`))
    for (const ErrorClass of AllErrors) {
      const instance = sample(ErrorClass)
      expect(documented.has(`${statusOf(instance)} ${instance.code}`)).toBe(true)
      expect(codesOf[instance._tag]).toContain(instance.code)
    }
    for (const resource of Object.values(idPrefixes))
      expect(documented.has(`404 ${resource}_not_found`)).toBe(true)
  })

  it("gives the HttpApi the status each class states, so OpenAPI and the edge agree", () => {
    for (const ErrorClass of AllErrors)
      expect(HttpApiSchema.getStatusError(ErrorClass)).toBe(ErrorClass.facts.status)
  })

  it.effect("keeps its class, code and status through an Effect failure", () =>
    Effect.gen(function* () {
      for (const ErrorClass of AllErrors) {
        const failure = yield* Effect.flip(Effect.fail(sample(ErrorClass)))
        expect(failure).toBeInstanceOf(ErrorClass)
        expect(statusOf(failure)).toBe(ErrorClass.facts.status)
      }
    })
  )
})
