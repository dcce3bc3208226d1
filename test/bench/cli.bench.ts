/**
 * The command line's one-row commands, wall time per run as a merchant's shell sees it (process start to exit),
 * against a real PostgreSQL. Target: under 1 s each, median of 5 (issue 35). Beside them, in the same interleaved
 * rounds, what no command can beat: `node -e 0` (the runtime) and `tsx -e 0` (the runtime plus TypeScript's
 * loader), and `sandbox` run from source through tsx, which the bin (a bundle in plain node, src/cli/deposits.mjs)
 * replaces, and `sandbox` through `npm run -s cli` (npm's start-up on top). Knob: `BENCH_CLI_RUNS` (default 5).
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { createTestDatabase } from "../support/Database"
import { recordFigure } from "./harness"

const exec = promisify(execFile)
const RUNS = Math.max(1, Math.round(Number(process.env.BENCH_CLI_RUNS ?? 5)))
const TARGET_MS = 1_000

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

interface Target {
  readonly name: string
  /** The program run: node unless named (npm, for the command as the README writes it). */
  readonly file?: string
  readonly args: ReadonlyArray<string>
  /** A command held to the target (the baselines and the source run are not). */
  readonly command?: string
}

const bin = (...args: Array<string>) => ["src/cli/deposits.mjs", ...args]

export async function run(): Promise<void> {
  const database = await createTestDatabase()
  try {
    const env = { ...process.env, DATABASE_URL: database.url }
    // Migrates the database and builds the bin's bundle, so neither is charged to a measured run.
    const { stdout } = await exec(process.execPath, bin("sandbox", "--json"), { env })
    const account = (JSON.parse(stdout) as { account_id: string }).account_id
    const targets: ReadonlyArray<Target> = [
      { name: "node -e 0", args: ["-e", "0"] },
      { name: "tsx -e 0", args: ["--import", "tsx", "-e", "0"] },
      { name: "accounts create", args: bin("accounts", "create", "--json"), command: "accounts create" },
      {
        name: "sessions create",
        args: bin("sessions", "create", "--account", account, "--json"),
        command: "sessions create"
      },
      { name: "sandbox", args: bin("sandbox", "--json"), command: "sandbox" },
      { name: "sandbox --account", args: bin("sandbox", "--account", account, "--json"), command: "sandbox" },
      // npm's own start-up on top of the bin: what `npm run -s cli -- sandbox --json | jq .` costs.
      {
        name: "npm run -s cli -- sandbox",
        file: "npm",
        args: ["run", "-s", "cli", "--", "sandbox", "--json"]
      },
      {
        name: "sandbox from source (tsx src/cli/main.ts)",
        args: ["--import", "tsx", "src/cli/main.ts", "sandbox", "--json"]
      }
    ]
    const samples = targets.map((): Array<number> => [])
    // Interleaved (A B C …, A B C …): a slow patch of the shared machine hits every target alike.
    for (let round = 1; round <= RUNS; round++) {
      for (const [index, target] of targets.entries()) {
        const started = performance.now()
        await exec(target.file ?? process.execPath, [...target.args], { env })
        samples[index]!.push(performance.now() - started)
      }
      process.stderr.write(
        `  round ${round}: ${targets.map((t, i) => `${t.name} ${samples[i]!.at(-1)!.toFixed(0)} ms`).join(", ")}\n`
      )
    }
    const medians = samples.map(median)
    const baseline = { name: "node -e 0", value: medians[0]!, unit: "ms" }
    const width = Math.max(...targets.map((t) => t.name.length)) + 2
    process.stdout.write(
      `${"command".padEnd(width)}${"median ms".padStart(10)}${"× node -e 0".padStart(13)}\n`
    )
    for (const [index, target] of targets.entries()) {
      const value = medians[index]!
      process.stdout.write(
        `${target.name.padEnd(width)}${value.toFixed(0).padStart(10)}${(value / baseline.value).toFixed(1).padStart(13)}\n`
      )
      recordFigure({
        figure: `${target.name}, wall time of one run, median of ${RUNS}${target.command === undefined ? "" : " (the bin)"}`,
        value,
        unit: "ms",
        target: target.command === undefined ? "—" : `< ${TARGET_MS} ms`,
        ...(target.command === undefined ? {} : { met: value < TARGET_MS }),
        ...(index === 0 ? {} : { baseline })
      })
    }
  } finally {
    await database.drop()
  }
}
