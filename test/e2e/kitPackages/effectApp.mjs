// A merchant's app on the installed @deposits/client tarball, as plain Node runs it: it imports only the package's
// public entry point and its own Effect (the package's peers). It prints one JSON line of what it saw.
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Fiber, Stream } from "effect"
import { errorDetails, InvalidRequest, makeClient } from "@deposits/client"

const env = process.env
const run = promisify(execFile)
/** The sandbox CLI (the payer's side of the story, not part of the kit). */
const deposits = (args) =>
  Effect.promise(() =>
    run(process.execPath, [env.DEPOSITS_BIN, ...args, "--url", env.BASE_URL, "--json"], { env }).then((r) =>
      JSON.parse(r.stdout)
    )
  )

const program = Effect.gen(function* () {
  const client = yield* makeClient({ baseUrl: env.BASE_URL, apiKey: env.API_KEY })
  const order = {
    amount: 1_250_000n,
    heading: "Effect app order",
    issuer_id: env.ISSUER_ID,
    payout_address_id: env.PAYOUT_ADDRESS_ID
  }
  const key = `effect-app-${Date.now()}`
  const created = yield* client.createDepositRequest(order, { idempotencyKey: key })
  const replayed = yield* client.createDepositRequest(order, { idempotencyKey: key })
  const idle = yield* client.waitForChange(created.id, created.version, { timeout: 1 })

  // Wait for `ready` while the sandbox payer attests its wallet through the CLI.
  const ready = yield* Effect.fork(client.waitForStatus(created.id, ["ready"]))
  yield* deposits(["devnet", "attest", "--request", created.id])
  const readied = yield* Fiber.join(ready).pipe(Effect.timeout("60 seconds"))

  const paid = yield* deposits(["devnet", "pay", "--request", created.id, "--mode", "exact"])
  const settled = yield* client.waitForStatus(created.id, ["settled"]).pipe(Effect.timeout("90 seconds"))

  const second = yield* client.createDepositRequest({ ...order, amount: 2_000_000n, heading: "second" })
  const listed = yield* Stream.runCollect(client.listAll({ limit: 1 }))
  const refused = yield* client.createDepositRequest({ ...order, amount: 0n }).pipe(Effect.flip)

  return {
    created: { id: created.id, status: created.status, version: created.version },
    replayedId: replayed.id,
    idle: { status: idle.status, version: idle.version },
    ready: { status: readied.status, address: readied.address },
    paid: { to: paid.to, amount_base_units: paid.amount_base_units },
    settled: { status: settled.status, received_base_units: settled.received_base_units },
    secondId: second.id,
    listedIds: Array.from(listed, (r) => r.id),
    refused: {
      tag: refused._tag,
      isInvalidRequest: refused instanceof InvalidRequest,
      message: refused.message,
      param: refused.param ?? null,
      docUrl: errorDetails(refused)?.docUrl ?? null
    }
  }
})

const result = await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
console.log(JSON.stringify(result))
