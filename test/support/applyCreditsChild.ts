import { Effect } from "effect"
import { ActorHost } from "../../services/actors/ActorHost"
import { actorHostRuntime } from "./ActorHostRuntime"

/**
 * Child process for the crash test: applies credit events c0…cN-1 in order, printing each id once committed,
 * until it is killed.
 */
const [databaseUrl, requestId, count] = process.argv.slice(2) as [string, string, string]
const runtime = actorHostRuntime(databaseUrl)
await runtime.runPromise(
  Effect.gen(function* () {
    const host = yield* ActorHost
    for (let i = 0; i < Number(count); i++) {
      yield* host.apply(requestId, `credit-${i}`, {
        type: "deposit.credited",
        at: new Date().toISOString(),
        credit_id: `c${i}`,
        amount_base_units: "1",
        from: "0x1111111111111111111111111111111111111111"
      })
      process.stdout.write(`committed ${i}\n`)
    }
  })
)
await runtime.dispose()
