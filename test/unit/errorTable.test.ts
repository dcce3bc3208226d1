import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { AllErrors, errorTable, errorTableMarkdown, statusOf } from "../../src/api/Errors"
import { idPrefixes } from "../../src/api/Schemas"

describe("the error table", () => {
  it("is the README's table, to the letter", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
    const section = readme.split("<!-- errors:start -->")[1]?.split("<!-- errors:end -->")[0]?.trim()
    expect(section).toBe(errorTableMarkdown())
  })

  it("documents every error class with its status, and one not-found code per id prefix", () => {
    const documented = new Set(errorTable.map((e) => `${e.status} ${e.code}`))
    for (const ErrorClass of AllErrors) {
      const tag = new ErrorClass({ message: "x", allow: [], resource: "deposit_request" } as never)._tag
      const instance = new ErrorClass({ message: "x", allow: [], resource: "deposit_request" } as never)
      expect(documented.has(`${statusOf[tag]} ${instance.code}`)).toBe(true)
    }
    for (const resource of Object.values(idPrefixes))
      expect(documented.has(`404 ${resource}_not_found`)).toBe(true)
  })
})
