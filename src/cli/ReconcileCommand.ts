import { Effect, Layer } from "effect"
import { withRunningChain } from "../../infra/chain/EmbeddedChain"
import { Reconciliation } from "../../services/depositRequests/Reconciliation"
import { uuidFromId } from "../../services/domain/PrefixedId"
import { loadConfig, settingsLayer } from "../app/Config"
import { CliDatabase } from "./Database"
import { CliError, type CliValues } from "./Output"
import { runCommand } from "./Run"

/** Requests per page the command reads. */
const PAGE = 500

const at = (name: string, value: string | undefined) => {
  if (value === undefined) return Effect.succeed(undefined)
  const date = new Date(value)
  return Number.isNaN(date.getTime())
    ? Effect.fail(new CliError(`--${name} must be an RFC 3339 time`))
    : Effect.succeed(date)
}

const program = (values: CliValues) =>
  Effect.gen(function* () {
    const uuid = uuidFromId("acct", values.account ?? "")
    if (uuid === undefined) return yield* Effect.fail(new CliError("--account must be an acct_ id"))
    const from = yield* at("from", values.from)
    const to = yield* at("to", values.to)
    const reconciliation = yield* Reconciliation
    const range = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
    // Every page, so the operator's look compares every request with the chain; the totals are the first page's.
    const first = yield* reconciliation.report(uuid, { ...range, limit: PAGE })
    const requests = [...first.requests]
    for (let cursor = first.next_cursor; cursor !== null; ) {
      const page = yield* reconciliation.report(uuid, { ...range, limit: PAGE, startingAfter: cursor })
      requests.push(...page.requests)
      cursor = page.next_cursor
    }
    const differing = requests.filter((r) => r.differences.length > 0).length
    const report = {
      totals: {
        ...first.totals,
        requests_with_differences: Math.max(first.totals.requests_with_differences, differing)
      },
      differences: first.differences,
      differences_complete: first.differences_complete,
      requests
    }
    if (values.json === true) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    } else {
      for (const r of report.requests) {
        const off = r.differences.map((d) => `${d.rule} ${d.difference_base_units}`).join(", ")
        process.stdout.write(
          `${r.deposit_request_id} ${r.status.padEnd(19)} in ${r.credited_base_units} settled ${r.settled_base_units} returned ${r.returned_base_units} held ${r.held_base_units} chain ${r.chain_balance_base_units ?? "-"} ${off === "" ? "ok" : `DIFF ${off}`}\n`
        )
      }
      process.stdout.write(
        `${report.requests.length} requests, ${report.totals.requests_with_differences} with differences\n`
      )
    }
    if (report.totals.requests_with_differences > 0) {
      return yield* Effect.fail(new CliError("the books do not balance (see the differences above)"))
    }
  })

/** `reconcile`: the reconciliation report over the database and the chain (the embedded one when none is set). */
export const run = (values: CliValues) =>
  runCommand(
    Effect.gen(function* () {
      const config = withRunningChain(yield* loadConfig())
      const services = Reconciliation.Default.pipe(
        Layer.provideMerge(CliDatabase),
        Layer.provide(settingsLayer(config))
      )
      return yield* Effect.scoped(Effect.provide(program(values), services))
    })
  )
