import { describe, expect, it } from "vitest"
import { integerQueryParameters } from "../../../src/client/fetch"
import { servedDocument } from "../../../src/client/generateTypes"

// The fetch client's types are built from the generated openapi.d.ts; the one list kept by hand is which query
// parameters are integers. It must name exactly those whose pattern in the served document takes only digits that
// fit a JavaScript number (a longer run of digits, such as a step cursor, stays a string).

/** A pattern that takes some whole numbers, nothing else, and none beyond a JavaScript number's safe digits. */
const isSafeInteger = (pattern: string | undefined) => {
  if (pattern === undefined) return false
  const accepts = (text: string) => new RegExp(pattern).test(text)
  const wholes = ["0", "1", "7", "20", "100", "12345"].some(accepts)
  const others = ["", "x", "-1", "1.5", " 1", "1e3", "0x1", "١"].some(accepts)
  const tooLong = ["1".repeat(16), "9".repeat(16), "10000000000000000000"].some(accepts)
  return wholes && !others && !tooLong
}

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
          if (isSafeInteger(parameter.schema?.pattern)) integers.add(parameter.name)
          else others.add(parameter.name)
        }
    expect([...integers].sort()).toEqual([...integerQueryParameters].sort())
    // A name is an integer everywhere it appears, or the type would be wrong on some route.
    expect([...integers].filter((name) => others.has(name))).toEqual([])
  })
})
