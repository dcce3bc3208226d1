import { describe, expect, it } from "vitest"
import { lifecycleEventId } from "../../../services/actors/LifecycleEventId"
import { newUuid7 } from "../../../services/platform/Ids"

/** Issue 47: a step applied again after a restore raises its event under the id receivers already had. */
describe("lifecycle event ids", () => {
  const request = "0192f3a4-5b6c-7d8e-9f01-23456789abcd"

  it("are the same for the same request and dedupe key, and differ otherwise", () => {
    const settled = lifecycleEventId(request, "deposit_request.settled", "deposit_request.settled")
    expect(lifecycleEventId(request, "deposit_request.settled", "deposit_request.settled")).toBe(settled)
    expect(lifecycleEventId(newUuid7(), "deposit_request.settled", "deposit_request.settled")).not.toBe(
      settled
    )
    const one = lifecycleEventId(request, "deposit_request.recovered_funds", `return:dr:overpayment:a`)
    const two = lifecycleEventId(request, "deposit_request.recovered_funds", `return:dr:overpayment:b`)
    expect(one).not.toBe(two)
  })

  it("are well-formed UUIDs (version 8) that sort by the request's creation, then by lifecycle stage", () => {
    const ready = lifecycleEventId(request, "deposit_request.ready", "deposit_request.ready")
    const deposited = lifecycleEventId(request, "deposit_request.deposited", "deposit_request.deposited")
    const settled = lifecycleEventId(request, "deposit_request.settled", "deposit_request.settled")
    for (const id of [ready, deposited, settled]) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(id.slice(0, 13)).toBe(request.slice(0, 13))
    }
    expect([settled, ready, deposited].sort()).toEqual([ready, deposited, settled])
    const later = "0192f3a4-5b6d-7000-8000-000000000000"
    expect(lifecycleEventId(later, "verification.approved", "verification.approved") > settled).toBe(true)
  })
})
