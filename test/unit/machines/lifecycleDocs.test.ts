import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { statechartMermaid, statusValues, transitionTable, transitionsDocument } from "../../../machines/step"

describe("the README's lifecycle section", () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
  const section = readme.split("<!-- lifecycle:start -->")[1]?.split("<!-- lifecycle:end -->")[0] ?? ""

  it("holds the statechart generated from the machine and links the transition table", () => {
    expect(section).toContain(statechartMermaid())
    expect(section).toContain("(machines/TRANSITIONS.md)")
    for (const status of statusValues) expect(section).toContain(`\`${status}\``)
  })

  it("machines/TRANSITIONS.md is the transition table generated from the machine", () => {
    const written = readFileSync(new URL("../../../machines/TRANSITIONS.md", import.meta.url), "utf8")
    expect(written).toBe(transitionsDocument())
  })

  it("covers every status in the table", () => {
    const seen = new Set(transitionTable().flatMap((r) => [r.from, r.to]))
    for (const status of statusValues) expect(seen.has(status)).toBe(true)
  })
})
