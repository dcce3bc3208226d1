import { describe, expect, it } from "vitest"
import { integerQueryParameters } from "../../../src/client/fetch"
import { servedDocument } from "../../../src/client/generateTypes"

// The fetch client's types are built from the generated openapi.d.ts; the one list kept by hand is which query
// parameters are integers. It must name exactly those whose pattern in the served document is digits that fit a
// JavaScript number (a longer run of digits, such as a step cursor, stays a string).

type Parameter = {
  readonly in: string
  readonly name: string
  readonly schema?: { readonly pattern?: string }
}

describe("the fetch client against the served document", () => {
  it("types as numbers exactly the query parameters whose pattern is a safe integer", () => {
    const document = JSON.parse(JSON.stringify(servedDocument())) as {
      paths: Record<string, Record<string, { parameters?: ReadonlyArray<Parameter> }>>
    }
    const integers = new Set<string>()
    const others = new Set<string>()
    for (const item of Object.values(document.paths))
      for (const operation of Object.values(item))
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== "query") continue
          const digits = /^\^\(0\|\[1-9\]\\d\{0,(\d+)\}\)\$$/.exec(parameter.schema?.pattern ?? "")
          if (digits !== null && Number(digits[1]) <= 14) integers.add(parameter.name)
          else others.add(parameter.name)
        }
    expect([...integers].sort()).toEqual([...integerQueryParameters].sort())
    // A name is an integer everywhere it appears, or the type would be wrong on some route.
    expect([...integers].filter((name) => others.has(name))).toEqual([])
  })
})
