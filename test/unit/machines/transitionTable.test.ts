import { describe, expect, it } from "@effect/vitest"
import { depositRequestMachine } from "../../../machines/DepositRequest"
import {
  statechartMermaid,
  statusValues,
  transitionTable,
  transitionTableMarkdown
} from "../../../machines/step"

describe("the transition table generated from the machine", () => {
  const table = transitionTable()

  it("lists the machine's top-level states, and only those", () => {
    expect([...statusValues].sort()).toEqual(Object.keys(depositRequestMachine.config.states ?? {}).sort())
  })

  it("is not empty and mentions every status", () => {
    expect(table.length).toBeGreaterThan(0)
    const mentioned = new Set(table.flatMap((r) => [r.from, r.to]))
    for (const status of statusValues) expect(mentioned.has(status)).toBe(true)
  })

  it("reaches every status but the initial one", () => {
    const targets = new Set(table.filter((r) => r.from !== r.to).map((r) => r.to))
    for (const status of statusValues)
      if (status !== depositRequestMachine.config.initial) expect(targets.has(status)).toBe(true)
  })

  it("names only guards the machine implements", () => {
    const guards = Object.keys(depositRequestMachine.implementations.guards)
    for (const r of table) if (r.guard !== undefined) expect(guards).toContain(r.guard)
  })

  it("renders every row and status as Markdown", () => {
    const md = transitionTableMarkdown()
    expect(md.split("\n")).toHaveLength(table.length + 2)
    for (const status of statusValues) expect(md).toContain(`\`${status}\``)
    for (const r of table) expect(md).toContain(`| \`${r.from}\` | \`${r.event}\` |`)
  })

  it("draws the statechart as Mermaid with every status and every change of status", () => {
    const mermaid = statechartMermaid()
    expect(mermaid.startsWith("stateDiagram-v2\n")).toBe(true)
    expect(mermaid).toContain(`[*] --> ${String(depositRequestMachine.config.initial)}`)
    for (const status of statusValues) expect(mermaid).toContain(status)
    for (const r of table) if (r.from !== r.to) expect(mermaid).toContain(`${r.from} --> ${r.to}: ${r.event}`)
  })
})
