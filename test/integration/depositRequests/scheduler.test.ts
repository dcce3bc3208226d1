import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ControlledClock } from "../../support/ControlledClock"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"
import { type RunningService, startService } from "../../support/Service"

const clock = new ControlledClock()
let service: RunningService

beforeAll(async () => {
  service = await startService({ clock })
})
afterAll(async () => {
  await service?.stop()
})

describe("the deadline scheduler", () => {
  it("expires an open request once its deadline passes, exactly once", async () => {
    const accountId = (await createMerchant(service.databaseUrl)).accountId.slice(5)
    const id = await service.runtime.runPromise(seedDepositRequest(accountId))
    const client = new pg.Client({ connectionString: service.databaseUrl })
    await client.connect()
    try {
      const status = async () =>
        (await client.query<{ status: string }>("select status from deposit_requests where id = $1", [id]))
          .rows[0]?.status
      await new Promise((r) => setTimeout(r, 1500))
      expect(await status()).toBe("awaiting_payer")
      clock.advance(25 * 60 * 60 * 1000)
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline && (await status()) !== "expired")
        await new Promise((r) => setTimeout(r, 100))
      expect(await status()).toBe("expired")
      await new Promise((r) => setTimeout(r, 1500))
      const events = await client.query<{ type: string }>(
        "select type from lifecycle_events where deposit_request_id = $1",
        [id]
      )
      expect(events.rows.map((r) => r.type)).toEqual(["deposit_request.expired"])
    } finally {
      await client.end()
    }
  })
})
