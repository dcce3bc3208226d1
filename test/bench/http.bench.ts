/**
 * HTTP overhead: a bare node:http server, a bare Effect HttpApi no-op endpoint, and the service's `/v1/health`
 * through the whole edge middleware (which also runs `select 1` on PostgreSQL), at 32 connections.
 *
 * Issue 2's target: the full stack keeps at least 85% of the bare Effect endpoint's throughput.
 * `BENCH_HTTP_VARIANTS=1` adds service variants that show where the difference goes (see servers/service.ts):
 * health without the database round trip, `/openapi.json`, and the tracer disabled.
 */
import {
  measureAll,
  type MeasureOptions,
  printRatio,
  printTable,
  recordFigure,
  serviceNodeFlags,
  withServers
} from "./harness"

const CONNECTIONS = 32
const TARGET = 0.85

interface Target {
  readonly name: string
  readonly script: string
  readonly env?: Record<string, string>
  readonly path: string
}

const baseTargets: ReadonlyArray<Target> = [
  { name: "bareNode", script: "servers/bareNode.ts", path: "/" },
  { name: "bareEffect", script: "servers/bareEffect.ts", path: "/noop" },
  { name: "service", script: "servers/service.ts", path: "/v1/health" }
]

const variantTargets: ReadonlyArray<Target> = [
  {
    name: "service-nodb",
    script: "servers/service.ts",
    env: { BENCH_HEALTH_SQL: "stub" },
    path: "/v1/health"
  },
  {
    name: "service-nodb-notrace",
    script: "servers/service.ts",
    env: { BENCH_HEALTH_SQL: "stub", BENCH_TRACER: "off" },
    path: "/v1/health"
  },
  { name: "service-notrace", script: "servers/service.ts", env: { BENCH_TRACER: "off" }, path: "/v1/health" }
]

export async function run(): Promise<void> {
  const withVariants = process.env.BENCH_HTTP_VARIANTS === "1"
  const targets = withVariants ? [...baseTargets, ...variantTargets] : baseTargets
  process.stdout.write(`\n== http: ${targets.map((t) => t.name).join(", ")} at ${CONNECTIONS} connections\n`)
  const rows = await withServers(
    targets.map((t) => ({
      name: t.name,
      script: t.script,
      ...(t.env === undefined ? {} : { env: t.env }),
      // The service runs as `npm start` runs it; the bare baselines with Node's defaults.
      ...(t.name.startsWith("service") ? { nodeArgs: serviceNodeFlags() } : {})
    })),
    (servers) =>
      measureAll(
        targets.map(
          (t): MeasureOptions => ({
            name: t.name,
            url: `${servers[t.name]!.baseUrl}${t.path}`,
            connections: CONNECTIONS,
            server: servers[t.name]!
          })
        )
      )
  )
  printTable(rows, "bareEffect")
  const ratio = printRatio(rows, "service", "bareEffect")
  const effectOverNode = printRatio(rows, "bareEffect", "bareNode")
  const rate = (name: string) => rows.find((r) => r.name === name)?.reqPerSec ?? Number.NaN
  recordFigure({
    figure: `GET /v1/health through the whole edge, ${CONNECTIONS} connections`,
    value: rate("service"),
    unit: "req/s",
    target: `≥ ${TARGET}× baseline`,
    met: ratio >= TARGET,
    baseline: { name: "bare Effect HttpApi no-op", value: rate("bareEffect"), unit: "req/s" },
    ratio
  })
  recordFigure({
    figure: "bare Effect HttpApi no-op",
    value: rate("bareEffect"),
    unit: "req/s",
    target: "—",
    baseline: { name: "bare node:http", value: rate("bareNode"), unit: "req/s" },
    ratio: effectOverNode
  })
  if (withVariants) {
    printRatio(rows, "service-nodb", "bareEffect")
    printRatio(rows, "service-nodb-notrace", "bareEffect")
    printRatio(rows, "service-notrace", "bareEffect")
  }
  process.stdout.write(
    `target: service ≥ ${TARGET} × bareEffect: ${ratio >= TARGET ? "met" : "NOT met"} (${ratio.toFixed(2)})\n`
  )
  const failures = rows.filter((r) => r.non2xx + r.errors > 0)
  for (const r of failures)
    process.stdout.write(`warning: ${r.name} had ${r.non2xx} non-2xx, ${r.errors} errors\n`)
}
