import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  statechartMermaid,
  statusValues,
  transitionTable,
  transitionTableMarkdown
} from "../../../machines/step"

describe("the README's lifecycle section", () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
  const section = readme.split("<!-- lifecycle:start -->")[1]?.split("<!-- lifecycle:end -->")[0] ?? ""

  it("holds the transition table and the statechart generated from the machine", () => {
    expect(section).toContain(transitionTableMarkdown())
    expect(section).toContain(statechartMermaid())
    for (const status of statusValues) expect(section).toContain(`\`${status}\``)
  })

  it("covers every status in the table", () => {
    const seen = new Set(transitionTable().flatMap((r) => [r.from, r.to]))
    for (const status of statusValues) expect(seen.has(status)).toBe(true)
  })
})
