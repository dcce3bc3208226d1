import { OpenApi } from "@effect/platform"
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { describe, expect, it } from "vitest"
import { Api } from "../../../src/http/Api"

describe("the OpenAPI description", () => {
  const spec = OpenApi.fromApi(Api) as unknown as {
    openapi: string
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
  }

  it("is OpenAPI 3.1 and passes Redocly's recommended rules with no error", async () => {
    expect(spec.openapi).toBe("3.1.0")
    const config = await createConfig({ extends: ["recommended"] })
    const problems = await lintFromString({
      source: JSON.stringify(spec),
      absoluteRef: "openapi.json",
      config
    })
    const errors = problems.filter((p) => p.severity === "error")
    expect(errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([])
    // the linter does find errors in a broken document, so the empty list above means something
    const broken = await lintFromString({
      source: JSON.stringify({ openapi: "3.1.0", paths: { x: {} } }),
      config
    })
    expect(broken.filter((p) => p.severity === "error").length).toBeGreaterThan(0)
  })

  it("describes errors as the envelope every answer uses", () => {
    const schema = spec.components.schemas.Unauthenticated
    expect(Object.keys(schema?.properties ?? {})).toEqual(["error", "request_id"])
    const properties = (schema?.properties ?? {}) as {
      error?: { required?: Array<string>; properties?: object }
    }
    const inner = properties.error
    expect(inner?.required).toEqual(["code", "message", "doc_url"])
    expect(Object.keys(inner?.properties ?? {})).toEqual(["code", "message", "doc_url"])
  })

  it("lists the routes of the contract", () => {
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(["/v1/health", "/v1/account", "/v1/account/api-key"])
    )
  })
})
