// npm warned that @nats-io/nuid 3 needs Node 22 while engines said 20.19: every installed package must admit the floor.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"

// semver is in the tree (a dependency of several tools); loaded untyped rather than adding @types/semver.
const semver = createRequire(import.meta.url)("semver") as {
  minVersion: (range: string) => { version: string } | null
  satisfies: (version: string, range: string) => boolean
}

const read = (file: string) => JSON.parse(readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8"))

describe("engines", () => {
  it("admits the lowest Node that package.json's engines allows in every installed package's engines", () => {
    const floor = semver.minVersion(read("package.json").engines.node)?.version
    expect(floor).toBeDefined()
    const packages = read("package-lock.json").packages as Record<string, { engines?: { node?: string } }>
    const refusing = Object.entries(packages)
      .filter(([, p]) => typeof p.engines?.node === "string" && !semver.satisfies(floor!, p.engines.node))
      .map(([path, p]) => `${path} wants node ${p.engines?.node}`)
    expect(refusing).toEqual([])
  })
})
