import { Effect, Layer, Option, Either } from "effect"
import { parseArgs } from "node:util"
import { Bus } from "../services/platform/Bus"
import { Accounts } from "../services/merchants/Accounts"
import { DatabaseForCliLive } from "../services/platform/Database"
import { withRunningChain } from "../infra/chain/EmbeddedChain"
import { ChainEndpoints } from "../services/chain/ChainEndpoints"
import { Ids } from "../services/platform/Ids"
import { Reconciliation } from "../services/depositRequests/Reconciliation"
import { formatTimestamp } from "../services/domain/Timestamp"
import { toId, uuidFromId } from "../services/domain/PrefixedId"
import { type AppConfigShape, loadConfig, settingsLayer } from "./Config"
import { fund, payRequest, payTargetOf, setTreasuryGas } from "./devnet"

const usage = `Usage: npm run cli -- <command> [options]

  sandbox [--name NAME] [--json]              create an account with a dashboard session and an API key
  accounts create [--name NAME] [--json]      create an account and a dashboard session token
  sessions create --account ACCT_ID [--json]  issue a dashboard session token for an account
  devnet fund --address 0x… --amount 12.500000  sandbox faucet: mint test USDC on the local chain
  devnet pay --request DR_ID --mode exact|partial|over|late|stranger [--amount 1.500000]
                                              sandbox: pay a ready request on the local chain from its payer's
                                              wallet (impersonated) or a stranger's, to try every money path
  devnet treasury-gas --eth 0|10               sandbox: set the treasury's gas; 0 makes the next payout fail
                                              (the request pauses with treasury_out_of_gas until resumed)
  reconcile --account ACCT_ID [--from T] [--to T] [--json]
                                              per request: payments, settlements, returns, recoveries and the
                                              deposit address's finalized balance, with every difference named

With DATABASE_URL set it uses that database; otherwise the embedded one under DATA_DIR (through the socket of a
running \`npm start\`, or directly when none runs).`

class CliError extends Error {}

const print = (json: boolean, value: Record<string, string | null>) => {
  if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
  else for (const [key, v] of Object.entries(value)) process.stdout.write(`${key.padEnd(20)} ${v ?? "-"}\n`)
}

const run = (argv: ReadonlyArray<string>, config: AppConfigShape) =>
  Effect.gen(function* () {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        name: { type: "string" },
        account: { type: "string" },
        from: { type: "string" },
        to: { type: "string" },
        request: { type: "string" },
        mode: { type: "string" },
        amount: { type: "string" },
        eth: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", default: false }
      }
    })
    const json = values.json === true
    const command = positionals.join(" ")
    const accounts = yield* Accounts
    switch (command) {
      case "sandbox": {
        const account = yield* accounts.create(values.name ?? "Sandbox merchant")
        const session = yield* accounts.createSession(account.id)
        const key = yield* accounts.issueApiKey(account.id)
        return print(json, {
          account_id: toId("acct", account.id),
          session_token: session.token,
          session_expires_at: formatTimestamp(session.expiresAt),
          api_key: key.apiKey
        })
      }
      case "accounts create": {
        const account = yield* accounts.create(values.name ?? "Merchant")
        const session = yield* accounts.createSession(account.id)
        return print(json, {
          account_id: toId("acct", account.id),
          environment: account.environment,
          session_token: session.token,
          session_expires_at: formatTimestamp(session.expiresAt)
        })
      }
      case "sessions create": {
        const uuid = uuidFromId("acct", values.account ?? "")
        if (uuid === undefined) return yield* Effect.fail(new CliError("--account must be an acct_ id"))
        const account = yield* accounts.get(uuid)
        if (Option.isNone(account)) return yield* Effect.fail(new CliError(`no account ${values.account}`))
        const session = yield* accounts.createSession(uuid)
        return print(json, {
          account_id: toId("acct", uuid),
          session_token: session.token,
          session_expires_at: formatTimestamp(session.expiresAt)
        })
      }
      case "devnet pay": {
        const uuid = uuidFromId("dr", values.request ?? "")
        if (uuid === undefined) return yield* Effect.fail(new CliError("--request must be a dr_ id"))
        const modes = ["exact", "partial", "over", "late", "stranger"] as const
        const mode = modes.find((m) => m === values.mode)
        if (mode === undefined)
          return yield* Effect.fail(new CliError(`--mode must be one of ${modes.join(", ")}`))
        const target = yield* payTargetOf(uuid)
        if (Either.isLeft(target))
          return yield* Effect.fail(new CliError(`${target.left} (${values.request})`))
        const paid = yield* Effect.tryPromise({
          try: () => payRequest(config, target.right, mode, values.amount),
          catch: (e) => new CliError(e instanceof Error ? e.message : String(e))
        })
        return print(json, paid)
      }
      case "devnet treasury-gas": {
        const set = yield* Effect.tryPromise({
          try: () => setTreasuryGas(config, values.eth),
          catch: (e) => new CliError(e instanceof Error ? e.message : String(e))
        })
        return print(json, set)
      }
      case "reconcile": {
        const uuid = uuidFromId("acct", values.account ?? "")
        if (uuid === undefined) return yield* Effect.fail(new CliError("--account must be an acct_ id"))
        const at = (name: string, value: string | undefined) => {
          if (value === undefined) return undefined
          const date = new Date(value)
          if (Number.isNaN(date.getTime())) throw new CliError(`--${name} must be an RFC 3339 time`)
          return date
        }
        const from = at("from", values.from)
        const to = at("to", values.to)
        const report = yield* (yield* Reconciliation).report(uuid, {
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to })
        })
        if (json) {
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
        return
      }
      default:
        process.stdout.write(`${usage}\n`)
        if (values.help !== true)
          return yield* Effect.fail(new CliError(`unknown command: ${command || "(none)"}`))
    }
  })

const main = Effect.gen(function* () {
  // Without CHAIN_RPC_URL the CLI uses the embedded chain of a running `npm start` on this DATA_DIR.
  const config = withRunningChain(yield* loadConfig())
  const argv = process.argv.slice(2)
  if (argv[0] === "devnet" && argv[1] === "fund") {
    const { values } = parseArgs({
      args: argv.slice(2),
      options: {
        address: { type: "string" },
        amount: { type: "string" },
        json: { type: "boolean", default: false }
      }
    })
    const funded = yield* Effect.tryPromise({
      try: () => fund(config, values.address, values.amount),
      catch: (e) => new CliError(e instanceof Error ? e.message : String(e))
    })
    return print(values.json === true, funded)
  }
  const services = Layer.mergeAll(Accounts.Default, Reconciliation.Default).pipe(
    Layer.provideMerge(Layer.mergeAll(Ids.layer, Bus.inProcess, ChainEndpoints.layer)),
    Layer.provideMerge(DatabaseForCliLive),
    Layer.provide(settingsLayer(config))
  )
  yield* Effect.provide(run(process.argv.slice(2), config), services)
})

Effect.runPromise(
  main.pipe(
    Effect.catchAllDefect((defect) => Effect.fail(defect instanceof Error ? defect.message : String(defect)))
  )
).then(
  () => process.exit(0),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`error: ${message.replace(/^\(FiberFailure\) (Error: )?/, "")}\n`)
    process.exit(1)
  }
)
