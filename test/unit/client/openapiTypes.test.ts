import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { clientTypesPath, generateClientTypes } from "../../../src/client/generateTypes"

// The fetch client's committed types (src/client/openapi.d.ts) against the ones the current contract generates:
// a change to src/http/Api.ts without `npm run client:types` fails here (CI runs the unit tests).
describe("the fetch client's generated types", () => {
  it("match the contract's /openapi.json", async () => {
    const generated = await generateClientTypes()
    const committed = readFileSync(clientTypesPath, "utf8")
    if (committed !== generated)
      expect.fail(
        "src/client/openapi.d.ts differs from the types /openapi.json generates: run `npm run client:types` and commit the file"
      )
    expect(committed).toContain('"/v1/deposit-requests/{id}"')
  })
})
