/**
 * The merchant's command line (`deposits …` through package.json `bin`, or `npm run -s cli -- …`). Each command's
 * module is imported only when that command runs, so a one-row command loads the accounts service and the database
 * and nothing else (no chain, no HTTP, no app layer); `--help` loads nothing at all.
 */
import { CliError, parseCliArgs, usage } from "./Output"

const fail = (message: string): never => {
  process.stderr.write(`error: ${message}\n`)
  process.exit(1)
}

const parsed = (() => {
  try {
    return parseCliArgs(process.argv.slice(2))
  } catch (e) {
    // An unknown option or a missing value: node:util names it.
    return fail(`${e instanceof Error ? e.message : String(e)}\n\n${usage}`)
  }
})()
const { values } = parsed
// Two commands take an argument: `trigger <event type>` and `events resend evt_…`.
const [first, second, third] = parsed.positionals
const n = parsed.positionals.length
const argument =
  first === "trigger" && n <= 2
    ? second
    : first === "events" && second === "resend" && n <= 3
      ? third
      : undefined
const command =
  argument === undefined
    ? parsed.positionals.join(" ")
    : parsed.positionals.slice(0, first === "trigger" ? 1 : 2).join(" ")

if (values.help === true) {
  process.stdout.write(`${usage}\n`)
  process.exit(0)
}

try {
  switch (command) {
    case "sandbox":
    case "accounts create":
    case "accounts invite":
    case "sessions create":
      await (await import("./AccountCommands")).run(command, values)
      break
    case "devnet fund":
    case "devnet attest":
    case "devnet pay":
    case "devnet treasury-gas":
    case "devnet blacklist":
    case "devnet unblacklist":
    case "devnet pause":
    case "devnet unpause":
      await (await import("./DevnetCommands")).run(command, values)
      break
    case "listen":
      await (await import("./ListenCommand")).run(values)
      break
    case "trigger":
      await (await import("./TriggerCommand")).run(values, argument)
      break
    case "events resend":
      await (await import("./EventsCommand")).run(values, argument)
      break
    case "reconcile":
      await (await import("./ReconcileCommand")).run(values)
      break
    default:
      fail(`unknown command: ${command || "(none)"}\n\n${usage}`)
  }
} catch (e) {
  fail(e instanceof CliError || e instanceof Error ? e.message : String(e))
}
