import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import artifact from "../../../infra/contracts/artifacts/TestUsdc.json"
import { abi, bytecode } from "../../../infra/contracts/TestUsdc"
import { compileTestUsdc, compilerSettings, sha256Hex, sourcePath } from "../../../infra/contracts/compile"

const regenerate =
  "the committed artifact is stale: run `npx tsx infra/contracts/compile.ts` and commit the result"

describe("TestUsdc artifact", () => {
  it("was built from the current source", () => {
    expect(artifact.sourceSha256, regenerate).toBe(sha256Hex(readFileSync(sourcePath, "utf8")))
  })

  it("is what compiling the source gives (bytecode, abi, compiler, settings)", async () => {
    const fresh = await compileTestUsdc()
    expect(fresh.sourceSha256, regenerate).toBe(artifact.sourceSha256)
    expect(fresh.solcVersion).toBe(artifact.solcVersion)
    expect(fresh.settings).toEqual(artifact.settings)
    expect(fresh.settings).toEqual(compilerSettings)
    expect(fresh.abi, regenerate).toEqual(artifact.abi)
    expect(fresh.bytecode, regenerate).toBe(artifact.bytecode)
  })

  it("is what the typed TestUsdc module exports", () => {
    expect(abi).toEqual(artifact.abi)
    expect(bytecode).toBe(artifact.bytecode)
    expect(bytecode).toMatch(/^0x[0-9a-f]+$/)
  })

  it("has the USDC surface the treasury relies on", () => {
    const functions = new Set<string>(abi.filter((item) => item.type === "function").map((item) => item.name))
    for (const name of [
      "name",
      "symbol",
      "decimals",
      "mint",
      "permit",
      "nonces",
      "DOMAIN_SEPARATOR",
      "transferWithAuthorization",
      "receiveWithAuthorization",
      "cancelAuthorization",
      "authorizationState"
    ]) {
      expect(functions.has(name), name).toBe(true)
    }
  })
})
