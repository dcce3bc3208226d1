import { parseArgs } from "node:util"
import { running } from "./Parts"
import { buildRelease, previousRelease } from "./Release"
import { appendResults, PLANT_KINDS, type PlantKind, runChaos, summaryOf } from "./Run"

/**
 * `npm run chaos -- --seconds N --seed S [--instances 3] [--plant KIND] [--upgrade-from [REF]] [--restore-drill]`: one run, its summary,
 * exit 1 on any violation. `--upgrade-from` alone starts from the previous release (see test/chaos/Release.ts).
 */
const argv = process.argv.slice(2)
const bare = argv.indexOf("--upgrade-from")
if (bare !== -1 && (argv[bare + 1] === undefined || argv[bare + 1]!.startsWith("--")))
  argv.splice(bare + 1, 0, "previous")
const { values } = parseArgs({
  args: argv,
  options: {
    "upgrade-from": { type: "string" },
    seconds: { type: "string", default: "60" },
    seed: { type: "string", default: String(Date.now() % 100_000) },
    instances: { type: "string", default: "3" },
    concurrency: { type: "string", default: "4" },
    plant: { type: "string" },
    "restore-drill": { type: "boolean", default: false },
    "no-results": { type: "boolean", default: false }
  }
})
const plantKind = values.plant as PlantKind | undefined
if (plantKind !== undefined && !PLANT_KINDS.includes(plantKind)) {
  console.error(`--plant must be one of ${PLANT_KINDS.join(", ")}`)
  process.exit(2)
}
// Stopped early (Ctrl-C): the run's PostgreSQL, NATS nodes, chain and instances go with it.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void Promise.all([...running].map((cleanup) => cleanup())).finally(() => process.exit(130))
  })
}
const upgradeFrom =
  values["upgrade-from"] === undefined
    ? undefined
    : buildRelease(
        values["upgrade-from"] === "previous" ? previousRelease().ref : values["upgrade-from"],
        (line) => console.log(line)
      )
const run = await runChaos({
  ...(upgradeFrom === undefined ? {} : { upgradeFrom }),
  seconds: Number(values.seconds),
  seed: Number(values.seed),
  instances: Number(values.instances),
  concurrency: Number(values.concurrency),
  restoreDrill: values["restore-drill"],
  log: (line) => console.log(line)
})
let code = 1
try {
  const planted = plantKind === undefined ? undefined : `${plantKind} on ${await run.plant(plantKind)}`
  const violations = await run.check()
  const summary = summaryOf(run.figures, violations, run.history.notes, planted)
  console.log(summary)
  if (violations.length > 0)
    for (const f of run.history.faults)
      console.log(`fault ${new Date(f.at).toISOString()} ${f.kind} ${f.detail}`)
  if (!values["no-results"]) appendResults(summary)
  code = violations.length === 0 ? 0 : 1
} finally {
  await run.stop()
}
process.exit(code)
