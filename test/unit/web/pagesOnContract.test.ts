import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

// The pages' wire types are the generated contract's (src/client/openapi.d.ts), so a drift of the contract fails
// `npm run typecheck`: each page project is compiled, as that script does, in a copy of the layout whose contract
// has one field the page reads renamed.
const root = join(import.meta.dirname, "../../..")
const pages = ["src/web/dashboard/page", "src/web/checkout/page"] as const
const contract = "src/client/openapi.d.ts"

/** A copy of the layout the page projects compile in: their folders, the contract, the base tsconfig. */
const copyLayout = (openapi: string) => {
  const dir = mkdtempSync(join(tmpdir(), "pages-on-contract-"))
  for (const page of pages) cpSync(join(root, page), join(dir, page), { recursive: true })
  cpSync(join(root, "tsconfig.json"), join(dir, "tsconfig.json"))
  cpSync(join(root, contract), join(dir, contract))
  writeFileSync(join(dir, contract), openapi)
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir")
  return dir
}

/** The type errors of one page project (`tsc --noEmit -p <page>/tsconfig.json`), as `file: message`. */
const typeErrors = (dir: string, page: string): Array<string> => {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(dir, page, "tsconfig.json"), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })
  if (parsed === undefined) throw new Error(`no tsconfig in ${page}`)
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: { ...parsed.options, noEmit: true }
  })
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file === undefined ? "" : d.file.fileName.slice(dir.length + 1)}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    )
}

/** The contract with `field` renamed inside one schema of components (not in the operations' inline copies). */
const renameInSchema = (openapi: string, schema: string, field: string, to: string) => {
  const start = openapi.indexOf(`\n        ${schema}: {\n`)
  const end = openapi.indexOf("\n        };\n", start)
  expect(start, `schema ${schema} in the contract`).toBeGreaterThan(0)
  const block = openapi.slice(start, end)
  expect(block, `${schema}.${field} in the contract`).toContain(`\n            ${field}: `)
  return (
    openapi.slice(0, start) +
    block.replace(`\n            ${field}: `, `\n            ${to}: `) +
    openapi.slice(end)
  )
}

describe("the pages on the contract", () => {
  const original = readFileSync(join(root, contract), "utf8")
  let intact: string
  let drifted: string
  beforeAll(() => {
    intact = copyLayout(original)
    // The dashboard shows a request's checkout link; the checkout asks for the proof still owed.
    drifted = copyLayout(
      renameInSchema(
        renameInSchema(original, "DepositRequest", "checkout_url", "checkout_link"),
        "PayerDepositRequest",
        "proof_required",
        "proof_owed"
      )
    )
  })
  afterAll(() => {
    for (const dir of [intact, drifted]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it("compile against the contract as it is", () => {
    for (const page of pages) expect(typeErrors(intact, page)).toEqual([])
  })

  it("fail the dashboard's typecheck, naming the field, when the contract renames one it reads", () => {
    const errors = typeErrors(drifted, "src/web/dashboard/page")
    expect(errors.length).toBeGreaterThan(0)
    expect(
      errors.filter((e) => e.startsWith("src/web/dashboard/page/") && e.includes("'checkout_url'"))
    ).not.toEqual([])
  })

  it("fail the checkout's typecheck, naming the field, when the contract renames one it reads", () => {
    const errors = typeErrors(drifted, "src/web/checkout/page")
    expect(errors.length).toBeGreaterThan(0)
    expect(
      errors.filter((e) => e.startsWith("src/web/checkout/page/") && e.includes("'proof_required'"))
    ).not.toEqual([])
  })
})
