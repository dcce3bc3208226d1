/**
 * `test/bench/RESULTS.md`: the latest figures of each suite. `npm run bench` replaces the section of every suite
 * it ran (one row per recorded figure: date, machine, figure, target, same-run baseline, ratio) and keeps the
 * other suites' sections as they were.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { cpus } from "node:os"
import type { Figure } from "./harness"

export const resultsFile = new URL("./RESULTS.md", import.meta.url)

const preamble = `# Benchmark results

The latest figures of each suite under \`test/bench/\`. \`npm run bench\` (or \`npm run bench -- <suite> …\`)
rewrites the section of every suite it ran with that run's figures and keeps the others. The machines are shared
and noisy: compare a figure with its baseline, measured in the same run, not with another day's figure. What each
suite measures: the README's Benchmarks section and the comment at the top of each \`*.bench.ts\`.
`

const columns = ["date", "machine", "figure", "value", "target", "baseline (same run)", "ratio"]

/** Cores, CPU model and Node version of this machine, as a row names it. */
export const machineDescription = (): string => {
  const all = cpus()
  const model = (all[0]?.model ?? "unknown CPU").replace(/\s+/g, " ").trim()
  return `${all.length} × ${model}, node ${process.version}`
}

const number = (x: number): string => {
  if (!Number.isFinite(x)) return String(x)
  const abs = Math.abs(x)
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ")

const cells = (at: string, machine: string, f: Figure): Array<string> =>
  [
    at,
    machine,
    f.figure,
    `${number(f.value)} ${f.unit}`,
    f.met === undefined ? f.target : `${f.target} (${f.met ? "met" : "not met"})`,
    f.baseline === undefined ? "—" : `${f.baseline.name}: ${number(f.baseline.value)} ${f.baseline.unit}`,
    f.ratio === undefined ? "—" : `${f.ratio.toFixed(2)}×`
  ].map(cell)

/** A table with each column padded to its widest cell, as Biome formats Markdown (so `npm run lint` passes). */
const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const length = (text: string) => [...text].length
  const widths = columns.map((_, i) => Math.max(...[columns, ...rows].map((r) => length(r[i] ?? ""))))
  const line = (r: ReadonlyArray<string>) =>
    `| ${widths.map((w, i) => (r[i] ?? "") + " ".repeat(w - length(r[i] ?? ""))).join(" | ")} |`
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n")
}

const section = (suite: string, body: string) =>
  `<!-- suite:${suite}:start -->\n## ${suite}\n\n${body}\n<!-- suite:${suite}:end -->`

/** The sections of a RESULTS.md, by suite, each as written (markers included). */
export const parseSections = (text: string): Map<string, string> => {
  const sections = new Map<string, string>()
  for (const match of text.matchAll(/<!-- suite:([\w-]+):start -->[\s\S]*?<!-- suite:\1:end -->/g))
    sections.set(match[1]!, match[0])
  return sections
}

/** The file with `suite`'s section replaced by these figures (sections in code-point order, as run.ts runs them). */
export const renderResults = (
  previous: string,
  suite: string,
  rows: ReadonlyArray<Figure>,
  at: Date = new Date(),
  machine: string = machineDescription()
): string => {
  const sections = parseSections(previous)
  const stamp = `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`
  sections.set(suite, section(suite, table(rows.map((f) => cells(stamp, machine, f)))))
  const ordered = [...sections.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, text]) => text)
  return `${preamble}\n${ordered.join("\n\n")}\n`
}

/** Rewrites `suite`'s section of RESULTS.md; a suite that recorded nothing leaves the file alone. */
export const writeResults = (suite: string, rows: ReadonlyArray<Figure>): void => {
  if (rows.length === 0) return
  let previous = ""
  try {
    previous = readFileSync(resultsFile, "utf8")
  } catch {
    // No file yet: this run writes the first.
  }
  writeFileSync(resultsFile, renderResults(previous, suite, rows))
}
