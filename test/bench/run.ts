/**
 * `npm run bench` runs every suite; `npm run bench -- http` runs the ones named. A suite is `<name>.bench.ts` in
 * this folder exporting `async function run()`. See harness.ts for the knobs (BENCH_SECONDS, BENCH_ROUNDS, …).
 * After each suite, the figures it recorded (`recordFigure`) replace its section of RESULTS.md.
 */
import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { takeFigures } from "./harness"
import { writeResults } from "./results"

const here = fileURLToPath(new URL(".", import.meta.url))
const available = readdirSync(here)
  .filter((file) => file.endsWith(".bench.ts"))
  .map((file) => file.slice(0, -".bench.ts".length))
  .sort()

const requested = process.argv.slice(2).filter((arg) => arg !== "--")
const unknown = requested.filter((name) => !available.includes(name))
if (unknown.length > 0) {
  process.stderr.write(`unknown bench suite(s): ${unknown.join(", ")}; available: ${available.join(", ")}\n`)
  process.exit(2)
}

const suites = requested.length > 0 ? requested : available
for (const name of suites) {
  const suite = (await import(`./${name}.bench.ts`)) as { run?: () => Promise<void> }
  if (typeof suite.run !== "function") throw new Error(`${name}.bench.ts does not export run()`)
  const started = Date.now()
  await suite.run()
  writeResults(name, takeFigures(name))
  process.stdout.write(`(${name}: ${((Date.now() - started) / 1000).toFixed(0)} s)\n`)
}
