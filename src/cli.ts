import { Effect, Layer, Option } from "effect"
import { parseArgs } from "node:util"
import { Bus } from "../services/Bus"
import { Accounts } from "../services/Accounts"
import { DatabaseForCliLive } from "../services/Database"
import { Ids } from "../services/Ids"
import { formatTimestamp, toId, uuidFromId } from "./api/Schemas"
import { AppConfig, loadConfig } from "./Config"
import { fund } from "./devnet"

const usage = `Usage: npm run cli -- <command> [options]

  sandbox [--name NAME] [--json]              create an account with a dashboard session and an API key
  accounts create [--name NAME] [--json]      create an account and a dashboard session token
  sessions create --account ACCT_ID [--json]  issue a dashboard session token for an account
  devnet fund --address 0x… --amount 12.5     sandbox faucet: mint test USDC on the local chain

With DATABASE_URL set it uses that database; otherwise the embedded one under DATA_DIR (through the socket of a
running \`npm start\`, or directly when none runs).`

class CliError extends Error {}

const print = (json: boolean, value: Record<string, string | null>) => {
  if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
  else for (const [key, v] of Object.entries(value)) process.stdout.write(`${key.padEnd(20)} ${v ?? "-"}\n`)
}

const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        name: { type: "string" },
        account: { type: "string" },
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
      default:
        process.stdout.write(`${usage}\n`)
        if (values.help !== true)
          return yield* Effect.fail(new CliError(`unknown command: ${command || "(none)"}`))
    }
  })

const main = Effect.gen(function* () {
  const config = yield* loadConfig()
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
  const services = Accounts.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Ids.layer, Bus.inProcess)),
    Layer.provideMerge(DatabaseForCliLive),
    Layer.provideMerge(AppConfig.layerWith(config))
  )
  yield* Effect.provide(run(process.argv.slice(2)), services)
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
