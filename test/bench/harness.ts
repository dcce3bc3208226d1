/**
 * A small benchmark harness: servers under test and the load generator each run in their own child process.
 *
 * Why child processes for both: Node serves HTTP on one event loop. With autocannon in the same process as the
 * server (or as the harness that started it), every request would be generated, parsed and timed on the loop
 * that is also trying to serve it, so the load tool's own CPU would be charged to the server under test and the
 * latencies would include waiting behind the other side's callbacks. Separate processes let the kernel schedule
 * the two on the two cores of these machines, the way a real client and server run. The harness process itself
 * only waits on children, so it costs nothing while a measurement runs.
 *
 * The machines are shared and noisy: every measurement is preceded by a warm-up (JIT, connection pools, caches)
 * and is the median of several rounds. Knobs (environment):
 * - `BENCH_SECONDS` length of one round (default 5)
 * - `BENCH_ROUNDS` rounds per target (default 3)
 * - `BENCH_WARMUP_SECONDS` warm-up before measuring a target (default 2; 0 to skip)
 * - `BENCH_CONNECTIONS` overrides the connection count a suite asks for
 * - `BENCH_SERVER_NODE_ARGS` extra node flags for the servers under test (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`)
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { isAbsolute } from "node:path"
import { fileURLToPath } from "node:url"
import type { LoadOptions, LoadSample } from "./loadgen"

const envNumber = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, got ${raw}`)
  return value
}

export const benchSettings = () => ({
  seconds: envNumber("BENCH_SECONDS", 5),
  rounds: Math.max(1, Math.round(envNumber("BENCH_ROUNDS", 3))),
  warmupSeconds: envNumber("BENCH_WARMUP_SECONDS", 2),
  connections: process.env.BENCH_CONNECTIONS ? envNumber("BENCH_CONNECTIONS", 32) : undefined
})

export interface MeasureOptions {
  readonly name: string
  readonly url: string
  readonly connections: number
  /** One round's length; defaults to `BENCH_SECONDS`. */
  readonly durationSeconds?: number
  readonly rounds?: number
  readonly warmupSeconds?: number
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string
  readonly uniqueHeader?: string
  /** The server answering: its CPU time per request is measured beside the throughput. */
  readonly server?: RunningServer
}

export interface Result {
  readonly name: string
  readonly connections: number
  /** Medians over the rounds. */
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  /** Median over the rounds of the server process's CPU time (user + system) per answered request, when known. */
  readonly cpuUsPerRequest?: number
  /** Summed over the measured rounds (the warm-up is not counted). */
  readonly non2xx: number
  readonly errors: number
  readonly rounds: ReadonlyArray<MeasuredSample>
}

/** A round, with the server's CPU time per request when the server is known. */
export interface MeasuredSample extends LoadSample {
  readonly cpuUsPerRequest?: number
}

const here = fileURLToPath(new URL(".", import.meta.url))
const loadgenScript = fileURLToPath(new URL("./loadgen.ts", import.meta.url))

/** Collects a child's output and waits for it to exit. */
const collect = (child: ChildProcess) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (d) => {
      stdout += d
    })
    child.stderr?.on("data", (d) => {
      stderr += d
    })
    child.once("error", reject)
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

/** One autocannon run in a child process. */
export const runOnce = async (options: LoadOptions): Promise<LoadSample> => {
  const child = spawn(process.execPath, ["--import", "tsx", loadgenScript, JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  const { code, stdout, stderr } = await collect(child)
  const line = stdout.trim().split("\n").pop()
  if (code !== 0 || line === undefined || line === "") {
    throw new Error(`load generator failed (exit ${code}):\n${stderr}${stdout}`)
  }
  return JSON.parse(line) as LoadSample
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const summarize = (options: MeasureOptions, rounds: ReadonlyArray<MeasuredSample>): Result => ({
  name: options.name,
  connections: options.connections,
  reqPerSec: median(rounds.map((r) => r.reqPerSec)),
  p50: median(rounds.map((r) => r.p50)),
  p99: median(rounds.map((r) => r.p99)),
  ...(options.server === undefined
    ? {}
    : { cpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest ?? Number.NaN)) }),
  non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
  errors: rounds.reduce((n, r) => n + r.errors + r.timeouts, 0),
  rounds
})

const loadOptions = (options: MeasureOptions, durationSeconds: number): LoadOptions => {
  const connections = benchSettings().connections ?? options.connections
  return {
    url: options.url,
    connections,
    durationSeconds,
    ...(options.method === undefined ? {} : { method: options.method }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.uniqueHeader === undefined ? {} : { uniqueHeader: options.uniqueHeader })
  }
}

const warmUp = async (options: MeasureOptions) => {
  const seconds = options.warmupSeconds ?? benchSettings().warmupSeconds
  if (seconds > 0) await runOnce(loadOptions(options, seconds))
}

const log = (message: string) => process.stderr.write(`${message}\n`)

/**
 * One measured round; with the server known, its CPU time per request too. On a shared machine throughput swings
 * with the neighbours' load; CPU time per request moves much less, so it is the steadier figure to compare.
 */
const measuredRound = async (options: MeasureOptions, seconds: number): Promise<MeasuredSample> => {
  const before = options.server?.cpuMs()
  const sample = await runOnce(loadOptions(options, seconds))
  const after = options.server?.cpuMs()
  if (before === undefined || after === undefined || sample.requests === 0) return sample
  return { ...sample, cpuUsPerRequest: ((after - before) * 1000) / sample.requests }
}

const describeSample = (name: string, round: number, s: MeasuredSample) =>
  `  ${name} round ${round}: ${Math.round(s.reqPerSec)} req/s, p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms` +
  (s.cpuUsPerRequest === undefined ? "" : `, server CPU ${s.cpuUsPerRequest.toFixed(0)} µs/req`) +
  `, load generator CPU ${s.loadgenCpuUsPerRequest.toFixed(0)} µs/req` +
  (s.non2xx + s.errors + s.timeouts > 0 ? `, non-2xx ${s.non2xx}, errors ${s.errors + s.timeouts}` : "")

/** Warm-up, then the median of N rounds against one target. */
export const measure = async (options: MeasureOptions): Promise<Result> => {
  const settings = benchSettings()
  const seconds = options.durationSeconds ?? settings.seconds
  await warmUp(options)
  const rounds: Array<MeasuredSample> = []
  for (let i = 0; i < (options.rounds ?? settings.rounds); i++) {
    const sample = await measuredRound(options, seconds)
    log(describeSample(options.name, i + 1, sample))
    rounds.push(sample)
  }
  return summarize(options, rounds)
}

/**
 * Several targets measured in interleaved rounds (A B C, A B C, …) after a warm-up of each, so a slow patch on a
 * shared machine hits every target rather than whichever happened to run during it. Results are in input order.
 */
export const measureAll = async (targets: ReadonlyArray<MeasureOptions>): Promise<Array<Result>> => {
  const settings = benchSettings()
  for (const target of targets) await warmUp(target)
  const rounds = targets.map((): Array<MeasuredSample> => [])
  const count = Math.max(...targets.map((t) => t.rounds ?? settings.rounds))
  for (let i = 0; i < count; i++) {
    for (const [index, target] of targets.entries()) {
      if (i >= (target.rounds ?? settings.rounds)) continue
      // A short re-warm after switching targets: the previous target's load left this server idle.
      await runOnce(loadOptions(target, 1))
      const sample = await measuredRound(target, target.durationSeconds ?? settings.seconds)
      log(describeSample(target.name, i + 1, sample))
      rounds[index]!.push(sample)
    }
  }
  return targets.map((target, index) => summarize(target, rounds[index]!))
}

const pad = (s: string, n: number) => s.padEnd(n)
const padStart = (s: string, n: number) => s.padStart(n)

/** Prints req/s, p50, p99, non-2xx and the throughput ratio to the named baseline of the same run. */
export const printTable = (rows: ReadonlyArray<Result>, baselineName: string): void => {
  const baseline = rows.find((r) => r.name === baselineName)
  const nameWidth = Math.max(8, ...rows.map((r) => r.name.length)) + 2
  const header =
    pad("target", nameWidth) +
    padStart("conns", 6) +
    padStart("req/s", 10) +
    padStart("p50 ms", 9) +
    padStart("p99 ms", 9) +
    padStart("non-2xx", 9) +
    padStart(`× ${baselineName}`, Math.max(12, baselineName.length + 4)) +
    padStart("CPU µs/req", 12) +
    padStart("× CPU", 8)
  const lines = [header, "-".repeat(header.length)]
  for (const r of rows) {
    const ratio = baseline === undefined ? "n/a" : (r.reqPerSec / baseline.reqPerSec).toFixed(2)
    lines.push(
      pad(r.name, nameWidth) +
        padStart(String(r.connections), 6) +
        padStart(Math.round(r.reqPerSec).toString(), 10) +
        padStart(r.p50.toFixed(2), 9) +
        padStart(r.p99.toFixed(2), 9) +
        padStart(String(r.non2xx + r.errors), 9) +
        padStart(ratio, Math.max(12, baselineName.length + 4)) +
        padStart(r.cpuUsPerRequest === undefined ? "" : r.cpuUsPerRequest.toFixed(0), 12) +
        padStart(
          r.cpuUsPerRequest === undefined || baseline?.cpuUsPerRequest === undefined
            ? ""
            : (r.cpuUsPerRequest / baseline.cpuUsPerRequest).toFixed(2),
          8
        )
    )
  }
  process.stdout.write(`${lines.join("\n")}\n`)
}

/** The ratio of two rows' throughput, printed as one line; returns it. */
export const printRatio = (rows: ReadonlyArray<Result>, numerator: string, denominator: string): number => {
  const a = rows.find((r) => r.name === numerator)
  const b = rows.find((r) => r.name === denominator)
  if (a === undefined || b === undefined) throw new Error(`no rows named ${numerator} and ${denominator}`)
  const ratio = a.reqPerSec / b.reqPerSec
  process.stdout.write(`${numerator} / ${denominator} = ${ratio.toFixed(3)}\n`)
  return ratio
}

/**
 * The node flags `npm start` gives the service (read from package.json, so the benches run the service as it is
 * deployed): the bare baselines keep Node's defaults.
 */
export { serviceNodeFlags } from "../support/Process"

export interface RunningServer {
  readonly name: string
  readonly baseUrl: string
  /** The process's CPU time so far (user + system), in milliseconds. */
  readonly cpuMs: () => number
  readonly stop: () => Promise<void>
}

const CLOCK_TICKS_PER_SECOND = 100

/** User + system CPU time of a process from `/proc/<pid>/stat` (Linux), in milliseconds. */
const processCpuMs = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // Fields after the command name (which may hold spaces, hence the last parenthesis): utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND
}

/**
 * A server under test in its own child process (`node --import tsx <script>`), the script absolute or relative to
 * test/bench/. The script
 * prints `PORT <n>` on stdout once it accepts connections; it is stopped with SIGTERM (SIGKILL after 10 s).
 */
export const startServer = async (
  name: string,
  script: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  nodeArgs: ReadonlyArray<string> = []
): Promise<RunningServer> => {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter((a) => a !== "") ?? []),
      ...nodeArgs,
      "--import",
      "tsx",
      isAbsolute(script) ? script : `${here}${script}`
    ],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    await exited
    clearTimeout(timer)
  }
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not print its port in ${timeoutMs} ms`)),
      timeoutMs
    )
    child.stdout?.on("data", (d) => {
      output += d
      const match = /^PORT (\d+)$/m.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    })
    child.stderr?.on("data", (d) => {
      output += d
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before printing its port:\n${output}`))
    })
  }).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  // Drain the pipes so a chatty server never blocks on a full pipe.
  child.stdout?.resume()
  child.stderr?.resume()
  const pid = child.pid
  return {
    name,
    baseUrl: `http://127.0.0.1:${port}`,
    cpuMs: () => (pid === undefined ? Number.NaN : processCpuMs(pid)),
    stop
  }
}

/** Starts servers, runs `body`, and stops every server however `body` ends (also on Ctrl-C). */
export const withServers = async <A>(
  specs: ReadonlyArray<{
    readonly name: string
    readonly script: string
    readonly env?: Record<string, string>
    /** Node flags of this server (the service runs with `npm start`'s: `serviceNodeFlags()`). */
    readonly nodeArgs?: ReadonlyArray<string>
  }>,
  body: (servers: Record<string, RunningServer>) => Promise<A>
): Promise<A> => {
  const started: Array<RunningServer> = []
  const stopAll = () => Promise.all(started.map((s) => s.stop()))
  const onSignal = () => {
    void stopAll().then(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  try {
    // One at a time: starting them together would measure nothing but make start-up slower on two cores.
    for (const spec of specs) {
      started.push(await startServer(spec.name, spec.script, spec.env, undefined, spec.nodeArgs))
    }
    return await body(Object.fromEntries(started.map((s) => [s.name, s])))
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    await stopAll()
  }
}

/** One figure of a run, beside its target and the same run's baseline: a row of `test/bench/RESULTS.md`. */
export interface Figure {
  readonly suite: string
  /** What was measured, in words (`/v1/health through the whole edge`). */
  readonly figure: string
  readonly value: number
  readonly unit: string
  /** The target as written (`≥ 0.85× baseline`, `p99 < 100 ms`), or "—" when the figure has none. */
  readonly target: string
  /** Whether the target was met, when there is one. */
  readonly met?: boolean
  /** What the figure is compared with, measured in the same run. */
  readonly baseline?: { readonly name: string; readonly value: number; readonly unit: string }
  /** value ÷ baseline, unless the suite states another ratio. */
  readonly ratio?: number
}

const figures: Array<Figure> = []

/**
 * Records a figure for `RESULTS.md` (the console output stays what the suite prints). The suite is stamped by
 * `run.ts`, which takes the figures after each suite; the ratio defaults to value ÷ baseline.
 */
export const recordFigure = (figure: Omit<Figure, "suite">): void => {
  const ratio =
    figure.ratio ?? (figure.baseline === undefined ? undefined : figure.value / figure.baseline.value)
  figures.push({ ...figure, suite: "", ...(ratio === undefined ? {} : { ratio }) })
}

/** The figures recorded since the last call, stamped with the suite that recorded them. */
export const takeFigures = (suite: string): Array<Figure> => figures.splice(0).map((f) => ({ ...f, suite }))
