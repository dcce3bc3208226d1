import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { Metrics } from "../../../services/platform/Metrics"

/**
 * The operator's alerts and dashboard (infra/monitoring, decision 0089): the rules load and pass their unit tests
 * in promtool, and every query in them and in the Grafana dashboard names a metric the service exports, a recording
 * rule, or Prometheus' own `up`; every alert has its runbook line in the README.
 */
const dir = join(__dirname, "../../../infra/monitoring")
const promtool = (...args: Array<string>) => spawnSync("promtool", args, { cwd: dir, encoding: "utf8" })

interface Rule {
  readonly record?: string
  readonly alert?: string
  readonly expr: string
}
const rules: Array<Rule> = (
  parse(readFileSync(join(dir, "rules.yml"), "utf8")) as { groups: Array<{ rules: Array<Rule> }> }
).groups.flatMap((g) => g.rules)
const recorded = new Set(rules.flatMap((r) => (r.record === undefined ? [] : [r.record])))
const alerts = rules.flatMap((r) => (r.alert === undefined ? [] : [r.alert]))

interface Panel {
  readonly title: string
  readonly targets: Array<{ readonly expr: string }>
}
const dashboard = JSON.parse(readFileSync(join(dir, "grafana/deposits.json"), "utf8")) as {
  panels: Array<Panel>
}

/** The series names a PromQL expression reads (ours and `up`), without label names, functions or template text. */
const namesIn = (expr: string) =>
  [...expr.replace(/\{[^}]*\}/g, "").matchAll(/\b(deposits[_:][a-z0-9_:]+|up)\b/g)].map((m) => m[1] as string)

const exported = Effect.gen(function* () {
  const metrics = yield* Metrics
  const names = new Set<string>()
  for (const m of yield* Effect.promise(() => metrics.registry.getMetricsAsJSON())) {
    names.add(m.name)
    if (String(m.type) === "histogram")
      for (const s of ["_bucket", "_count", "_sum"]) names.add(`${m.name}${s}`)
  }
  return names
}).pipe(Effect.provide(Metrics.Default))

/** What a name must be: exported by the service, recorded by a rule, or Prometheus' own `up`. */
const unknownNames = (exprs: ReadonlyArray<string>, names: ReadonlySet<string>) =>
  exprs.flatMap(namesIn).filter((n) => n !== "up" && !names.has(n) && !recorded.has(n))

describe("infra/monitoring", () => {
  it("loads in promtool, and each alert fires when it should and stays silent when not", () => {
    const check = promtool("check", "rules", "rules.yml")
    assert.strictEqual(
      check.status,
      0,
      `promtool check rules: ${check.error ?? ""}${check.stdout}${check.stderr}`
    )
    assert.match(check.stdout, /SUCCESS: \d+ rules found/)
    const test = promtool("test", "rules", "rules.test.yml")
    assert.strictEqual(test.status, 0, `promtool test rules: ${test.stdout}${test.stderr}`)
    const tested = readFileSync(join(dir, "rules.test.yml"), "utf8")
    for (const alert of alerts) assert.include(tested, `alertname: ${alert}\n`, `${alert} has a unit test`)
  })

  it("fails promtool's unit tests when an alert's threshold moves", () => {
    const moved = spawnSync(
      "sh",
      [
        "-c",
        `t=$(mktemp -d) && cp rules.yml rules.test.yml "$t" && sed -i 's/lag_blocks) > 30/lag_blocks) > 60/' "$t/rules.yml" && promtool test rules "$t/rules.test.yml"; s=$?; rm -r "$t"; exit $s`
      ],
      { cwd: dir, encoding: "utf8" }
    )
    assert.notStrictEqual(moved.status, 0)
    assert.include(`${moved.stdout}${moved.stderr}`, "alertname: DepositsChainWatcherLagging")
  })

  it.effect("reads only metrics the service exports, in the rules and in the Grafana dashboard", () =>
    Effect.gen(function* () {
      const names = yield* exported
      assert.isTrue(names.has("deposits_requests_needing_attention"))
      assert.deepStrictEqual(
        unknownNames(
          rules.map((r) => r.expr),
          names
        ),
        []
      )
      const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))
      assert.isAtLeast(exprs.length, 15)
      assert.deepStrictEqual(unknownNames(exprs, names), [])
      // The check sees a name the service does not export.
      assert.deepStrictEqual(unknownNames(["rate(deposits_made_up_total[5m])"], names), [
        "deposits_made_up_total"
      ])
      // Every metric the service exports is on the dashboard.
      const shown = new Set(exprs.flatMap(namesIn).map((n) => n.replace(/_(bucket|count|sum)$/, "")))
      const onDashboard = (n: string) =>
        shown.has(n) || rules.some((r) => r.record !== undefined && shown.has(r.record) && r.expr.includes(n))
      for (const n of names)
        if (!/_(bucket|count|sum)$/.test(n)) assert.isTrue(onDashboard(n), `${n} on the dashboard`)
    })
  )

  it("has a runbook line in the README for every alert", () => {
    const readme = readFileSync(join(__dirname, "../../../README.md"), "utf8")
    const runbook = readme.slice(readme.indexOf("### Alerts and what to do"))
    assert.isAbove(readme.indexOf("### Alerts and what to do"), 0)
    for (const alert of alerts) assert.match(runbook, new RegExp(`\\| \`${alert}\` \\|`), alert)
  })
})
