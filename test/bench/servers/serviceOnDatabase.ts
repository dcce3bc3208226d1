/**
 * Bench target: the real service on a database the bench prepared (`BENCH_DATABASE_URL`), with the rate limit
 * raised (`BENCH_RATE_LIMIT`) so a long run measures the accounting, not the 429s. Prints `PORT <n>`.
 */
import { startService } from "../../support/Service"

const url = process.env.BENCH_DATABASE_URL
if (url === undefined) throw new Error("BENCH_DATABASE_URL is required")
const capacity = Number(process.env.BENCH_RATE_LIMIT ?? 100_000_000)
const service = await startService({
  database: { url, drop: async () => {} },
  ...(process.env.BENCH_TRACER === "off" ? { tracer: false } : {}),
  config: { rateLimitCapacity: capacity, rateLimitRefillPerSecond: capacity }
})
process.stdout.write(`PORT ${new URL(service.baseUrl).port}\n`)
const stop = () => {
  service.stop().then(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
