/**
 * The load generator, run as its own child process by the harness (`node --import tsx loadgen.ts '<json>'`).
 *
 * It drives autocannon programmatically and prints one JSON line with the result. Latencies are recorded here
 * with sub-millisecond resolution from autocannon's `response` event: autocannon's own histogram keeps whole
 * milliseconds, which reads "0 ms" for anything faster than 1 ms (a bare node:http server at 32 connections).
 */
import { randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"

export interface LoadOptions {
  readonly url: string
  readonly connections: number
  readonly durationSeconds: number
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string
  /** A header given a fresh random value on every request (an Idempotency-Key, so every POST creates). */
  readonly uniqueHeader?: string
}

export interface LoadSample {
  readonly requests: number
  readonly seconds: number
  readonly reqPerSec: number
  /** Milliseconds, over every response (2xx or not). */
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  /**
   * The load generator's own CPU time per request. On these two cores it competes with the server under test, so
   * a row whose requests cost the generator more (a fresh header each) is printed with it.
   */
  readonly loadgenCpuUsPerRequest: number
}

interface AutocannonResult {
  readonly duration: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly requests: { readonly total: number }
}

interface AutocannonInstance {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void
  ): void
}

type Autocannon = (
  options: Record<string, unknown>,
  callback: (error: Error | null, result: AutocannonResult) => void
) => AutocannonInstance

// autocannon ships no types and is CommonJS.
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon

const percentile = (sorted: Float64Array, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index] ?? Number.NaN
}

export const runLoad = (options: LoadOptions): Promise<LoadSample> =>
  new Promise((resolve, reject) => {
    let latencies = new Float64Array(1 << 16)
    const cpuAtStart = process.cpuUsage()
    // A fresh Idempotency-Key per request, set in place: spreading the request and a UUID per request cost the
    // generator ~20 µs more per request (CPU taken from the server under test on these two cores).
    const prefix = `${randomUUID()}-`
    let next = 0
    let count = 0
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.durationSeconds,
        method: options.method ?? "GET",
        ...(options.headers === undefined ? {} : { headers: options.headers }),
        ...(options.body === undefined ? {} : { body: options.body }),
        ...(options.uniqueHeader === undefined
          ? {}
          : {
              requests: [
                {
                  setupRequest: (request: { headers?: Record<string, string> }) => {
                    ;(request.headers as Record<string, string>)[options.uniqueHeader as string] =
                      `${prefix}${next++}`
                    return request
                  }
                }
              ]
            })
      },
      (error, result) => {
        if (error) return reject(error)
        const sorted = latencies.subarray(0, count).sort()
        const cpu = process.cpuUsage(cpuAtStart)
        resolve({
          requests: result.requests.total,
          seconds: result.duration,
          reqPerSec: result.requests.total / result.duration,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          loadgenCpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, result.requests.total)
        })
      }
    )
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2)
        grown.set(latencies)
        latencies = grown
      }
      latencies[count++] = responseTime
    })
  })

// Run as a script: one measurement, one JSON line on stdout.
if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const options = JSON.parse(process.argv[2] ?? "{}") as LoadOptions
  runLoad(options).then(
    (sample) => {
      process.stdout.write(`${JSON.stringify(sample)}\n`)
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`)
      process.exitCode = 1
    }
  )
}
