import { Cause } from "effect"
import { describe, expect, it } from "vitest"
import { InvalidRequest } from "../../../src/http/Errors"
import { classifyCause } from "../../../src/http/edge/ErrorEnvelope"
import { renderError } from "../../../src/http/middleware/ErrorBody"

const noRoutes = () => ({ allow: [], resource: undefined, template: undefined })

describe("the error envelope", () => {
  it("turns an unexpected defect into a 500 internal_error that leaks nothing", async () => {
    const cause = Cause.die(new Error("connection string postgres://admin:hunter2@db/prod"))
    const { error, unexpected } = classifyCause(cause, noRoutes, "GET", "/v1/anything")
    expect(unexpected).toBe(true)
    const response = renderError(error, "req-1", "https://pay.example.com")
    expect(response.status).toBe(500)
    const body = JSON.parse(new TextDecoder().decode((response.body as { body: Uint8Array }).body)) as {
      error: { code: string; message: string; doc_url: string }
      request_id: string
    }
    expect(body.error.code).toBe("internal_error")
    expect(body.error.doc_url).toBe("https://pay.example.com/docs/errors#internal_error")
    expect(body.request_id).toBe("req-1")
    expect(JSON.stringify(body)).not.toMatch(/hunter2|postgres|connection/)
  })

  it("keeps a typed error as it is, with its status and field", () => {
    const { error, unexpected } = classifyCause(
      Cause.fail(new InvalidRequest({ message: "bad", param: "amount" })),
      noRoutes,
      "POST",
      "/v1/deposit-requests"
    )
    expect(unexpected).toBe(false)
    const response = renderError(error, "r", "http://localhost:8080")
    expect(response.status).toBe(400)
    const body = JSON.parse(new TextDecoder().decode((response.body as { body: Uint8Array }).body)) as {
      error: { param: string; doc_url: string }
    }
    expect(body.error).toMatchObject({
      param: "amount",
      doc_url: "http://localhost:8080/docs/errors#invalid_request"
    })
  })
})
