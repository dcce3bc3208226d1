import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { migrations } from "../../../infra/migrations"
import { previousRelease } from "../../chaos/Release"

/**
 * Issue 47, decision 0100: schema changes follow expand/contract, so the previous release runs on this one's schema
 * during a rolling upgrade. A migration added since the previous release may add (tables, nullable or defaulted
 * columns, indexes, functions under new names) but not take away or reshape what the previous release uses; the
 * contract step comes a release later, when no running build needs the old shape, and says so with a
 * `contract:` comment naming the release whose code stopped using it.
 */
const CONTRACTING: ReadonlyArray<readonly [string, RegExp]> = [
  ["drops a column", /\bdrop\s+column\b/i],
  ["drops a table", /\bdrop\s+table\b/i],
  ["drops a function", /\bdrop\s+function\b/i],
  ["drops a type", /\bdrop\s+type\b/i],
  ["renames", /\brename\s+(column\b|to\b)/i],
  ["changes a column's type", /\balter\s+column\s+\w+\s+(set\s+data\s+)?type\b/i],
  ["makes a column required", /\bset\s+not\s+null\b/i],
  [
    "adds a required column without a default",
    /\badd\s+column\s+(?:(?!default)[^,;`])*\bnot\s+null\b(?![^,;`]*\bdefault\b)/i
  ]
]

/** What a migration's source does that the previous release could not run on, unless it says it is a contract step. */
const contractingStatements = (source: string): ReadonlyArray<string> =>
  /\bcontract:\s*\S/.test(source)
    ? []
    : CONTRACTING.filter(([, pattern]) => pattern.test(source)).map(([what]) => what)

const ROOT = join(import.meta.dirname, "../../..")
const previous = previousRelease()
const previousMigrations = new Set(
  [
    ...execFileSync("git", ["show", `${previous.ref}:infra/migrations/index.ts`], {
      cwd: ROOT,
      encoding: "utf8"
    }).matchAll(/^\s+"(\d{4}_\w+)":/gm)
  ].map((match) => match[1]!)
)
const added = Object.keys(migrations).filter((name) => !previousMigrations.has(name))

/** A stored function's name and arguments, as `create or replace` cannot change them in place. */
const signatureOf = (sql: string) =>
  /create\s+or\s+replace\s+function\s+([\s\S]*?\))/i.exec(sql)?.[1]?.replace(/\s+/g, " ")

describe(`migrations since ${previous.version} only expand the schema`, () => {
  it("reads the previous release's migrations from git history", () => {
    expect(previousMigrations.size).toBeGreaterThan(40)
    for (const name of previousMigrations) expect(Object.keys(migrations)).toContain(name)
  })

  for (const name of added)
    it(`${name} leaves what ${previous.version} uses in place`, () => {
      expect(
        contractingStatements(readFileSync(join(ROOT, "infra/migrations", `${name}.ts`), "utf8"))
      ).toEqual([])
    })

  it("every stored function the previous release calls keeps its name and arguments", () => {
    const directory = join(ROOT, "infra/sql/functions")
    const theirs = execFileSync(
      "git",
      ["ls-tree", "--name-only", `${previous.ref}`, "infra/sql/functions/"],
      {
        cwd: ROOT,
        encoding: "utf8"
      }
    )
      .split("\n")
      .filter((path) => path.endsWith(".sql"))
    const ours = new Set(readdirSync(directory))
    for (const path of theirs) {
      const file = path.slice("infra/sql/functions/".length)
      expect(ours.has(file), `${file} is still there`).toBe(true)
      const before = execFileSync("git", ["show", `${previous.ref}:${path}`], { cwd: ROOT, encoding: "utf8" })
      expect(signatureOf(readFileSync(join(directory, file), "utf8"))).toBe(signatureOf(before))
    }
  })

  it("names each contracting statement and lets a marked contract step through", () => {
    expect(contractingStatements("alter table t drop column c")).toEqual(["drops a column"])
    expect(contractingStatements("alter table t rename column a to b")).toEqual(["renames"])
    expect(contractingStatements("alter table t alter column c type bigint")).toEqual([
      "changes a column's type"
    ])
    expect(contractingStatements("alter table t add column c text not null")).toEqual([
      "adds a required column without a default"
    ])
    expect(contractingStatements("alter table t add column c text not null default ''")).toEqual([])
    expect(contractingStatements("alter table t add column c text")).toEqual([])
    expect(contractingStatements("create index on t (a)")).toEqual([])
    expect(
      contractingStatements("-- contract: 0.1.0 stopped reading c\nalter table t drop column c")
    ).toEqual([])
  })
})
