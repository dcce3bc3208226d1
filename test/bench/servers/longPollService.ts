/**
 * Long-poll bench target: the real service against a fresh database, with an account, an API key and N seeded
 * deposit requests. Prints `READY <port> <apiKey> <comma-separated ids>`; answers `mem` on stdin with
 * `MEM <heapUsed> <rss> <polls waiting>` after a GC (run with --expose-gc), and `waiting` with `WAITING <n>`.
 */
import { Effect, Option } from "effect"
import { createInterface } from "node:readline"
import { ChangeFeed } from "../../../services/platform/ChangeFeed"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"
import { startService } from "../../support/Service"

const count = Number(process.env.BENCH_REQUESTS ?? 1000)
const service = await startService({
  tracer: process.env.BENCH_TRACER !== "on",
  config: {
    rateLimitCapacity: 10_000_000,
    rateLimitRefillPerSecond: 1_000_000,
    longPollMaxPerAddress: 1_000_000,
    natsUrl: Option.none()
  }
})
const merchant = await createMerchant(service.databaseUrl)
const ids: Array<string> = []
for (let i = 0; i < count; i++)
  ids.push(`dr_${await service.runtime.runPromise(seedDepositRequest(merchant.accountId.slice(5)))}`)
process.stdout.write(`READY ${new URL(service.baseUrl).port} ${merchant.apiKey} ${ids.join(",")}\n`)

const gc = (globalThis as { gc?: () => void }).gc
createInterface({ input: process.stdin }).on("line", (line) => {
  const waiting = service.runtime.runPromise(Effect.map(ChangeFeed, (feed) => feed.waiting()))
  if (line.trim() === "waiting") {
    waiting.then((n) => process.stdout.write(`WAITING ${n}\n`))
    return
  }
  if (line.trim() !== "mem") return
  gc?.()
  const m = process.memoryUsage()
  waiting.then((n) => process.stdout.write(`MEM ${m.heapUsed} ${m.rss} ${n}\n`))
})
process.once("SIGTERM", () => {
  service.stop().then(() => process.exit(0))
})
