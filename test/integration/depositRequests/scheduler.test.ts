import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { ControlledClock } from "../../support/ControlledClock"
import { Sandbox, sandboxLayer } from "../../support/Sandbox"
import { seedDepositRequest } from "../../support/seedDepositRequest"

const clock = new ControlledClock()

/** A session on the service's database, ended with the test. */
const session = Effect.flatMap(Sandbox, ({ service }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: service.databaseUrl })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  )
)

// The live clock for the test itself: it waits real time for the scheduler, and moves only the service's clock.
layer(
  sandboxLayer(() => ({ clock })),
  { timeout: 120_000, excludeTestServices: true }
)("the deadline scheduler", (it) => {
  it.scoped("expires an open request once its deadline passes, exactly once", () =>
    Effect.gen(function* () {
      const { service, merchant } = yield* Sandbox
      const id = yield* seedDepositRequest(merchant.accountId.slice(5)).pipe(Effect.provide(service.runtime))
      const client = yield* session
      const status = Effect.promise(() =>
        client.query<{ status: string }>("select status from deposit_requests where id = $1", [id])
      ).pipe(Effect.map((r) => r.rows[0]?.status))
      yield* Effect.sleep("1500 millis")
      assert.strictEqual(yield* status, "awaiting_payer")
      clock.advance(25 * 60 * 60 * 1000)
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline && (yield* status) !== "expired") yield* Effect.sleep("100 millis")
      assert.strictEqual(yield* status, "expired")
      yield* Effect.sleep("1500 millis")
      const events = yield* Effect.promise(() =>
        client.query<{ type: string }>("select type from lifecycle_events where deposit_request_id = $1", [
          id
        ])
      )
      assert.deepStrictEqual(
        events.rows.map((r) => r.type),
        ["deposit_request.expired"]
      )
    })
  )
})
