/**
 * What every command shares and nothing heavy: the usage text, argument parsing and printing. Kept free of Effect
 * and the services, so `--help` and a mistyped command answer at once (src/cli/main.ts loads a command's module only
 * when that command runs).
 */
import { parseArgs } from "node:util"

export const usage = `Usage: deposits <command> [options]      (from a clone: npx deposits …, or npm run -s cli -- …)

  sandbox [--name NAME] [--account ACCT_ID] [--json]
                                              an account with a dashboard session and an API key; with --account,
                                              the same account again: a new session, and a new API key while the
                                              one it replaces keeps working for 24 hours (no new account per run);
                                              dashboard_url opens the dashboard signed into it (once: the token
                                              rides in the URL fragment and is traded at once)
  accounts create [--name NAME] [--owner-email EMAIL] [--json]
                                              create an account and a dashboard session token; with
                                              --owner-email, invite its owner too (below)
  accounts invite --account ACCT_ID --email EMAIL [--json]
                                              invite someone to the account: prints the one-time link (valid 7
                                              days) and mails it when SMTP_URL is set
  sessions create --account ACCT_ID [--json]  issue a dashboard session token for an account, and its dashboard_url
  devnet fund --address 0x… --amount 12.500000  sandbox faucet: mint USDC (Circle's FiatToken v2.2) on the local chain
  devnet attest --request DR_ID [--url URL]   sandbox: attest the sandbox payer wallet (a dev account of the local
                                              chain) for a request waiting for its payer, through the running
                                              service (--url, default: API, below)
  devnet pay --request DR_ID --mode exact|partial|over|late|stranger [--amount 1.500000] [--url URL]
                                              sandbox: pay a request on the local chain from its payer's wallet
                                              (impersonated) or a stranger's, to try every money path; a request
                                              with no wallet yet is attested first, as devnet attest does
  devnet treasury-gas --eth 0|10               sandbox: set the treasury's gas; 0 makes the next payout fail
                                              (the request pauses with treasury_out_of_gas until resumed)
  devnet blacklist|unblacklist --address 0x…  sandbox: the token's blacklister blocks or frees an address (a
                                              payout address, a payer wallet, a deposit address)
  devnet pause|unpause                        sandbox: the token's pauser stops or restarts every transfer
  listen --forward-to http://localhost:3000/hooks [--events TYPE,TYPE] [--api URL] [--key KEY]
                                              sandbox: forward the account's webhook deliveries to a server on
                                              this machine; prints the signing secret, then a line per delivery
                                              with the local answer (a failure is retried as for any endpoint).
                                              Talks to the service over HTTP only (--api, default: API, below)
                                              with the API key (--key, or DEPOSITS_API_KEY);
                                              Ctrl-C removes the listener; the next run on this
                                              machine reopens it with the same secret (kept in
                                              ~/.config/deposits/listen.json); --rotate-secret: a new one
  trigger EVENT_TYPE [--api URL] [--key KEY]  sandbox: a new request driven through the steps that emit the event
                                              (attest, pay, overpay, pull the deadline…) on the local chain, as
                                              devnet pay does; without a type, the list of types
  events resend EVT_ID [--to WH_ID] [--api URL] [--key KEY]
                                              deliver an event again (same id and bytes) to the endpoint or
                                              listener named, or else to every one that got it
  reconcile --account ACCT_ID [--from T] [--to T] [--json]
                                              per request: payments, settlements, returns, recoveries and the
                                              deposit address's finalized balance, with every difference named

  --json prints one JSON object on stdout and nothing else; messages and errors go to stderr.

API names the service that devnet attest, devnet pay, listen, trigger and events reach over HTTP, and the one
dashboard_url links to (the quickstart's API, e.g. http://localhost:8181); unset, PUBLIC_BASE_URL, or
http://localhost:PORT.

With DATABASE_URL set it uses that database; otherwise the embedded one under DATA_DIR (through the socket of a
running \`npm start\`, or directly when none runs).`

/**
 * A refusal the user can act on: printed as one line on stderr, exit code 1. A refusal the service answered
 * carries its `doc_url`, printed on the line under it (the code's line on the service's error page).
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly docUrl?: string
  ) {
    super(message)
  }
}

/** The `doc_url` of an error a step threw (a `CliError`, or an error a helper tagged with the service's link). */
export const docUrlOf = (failure: unknown): string | undefined => {
  const docUrl =
    typeof failure === "object" && failure !== null ? (failure as { docUrl?: unknown }).docUrl : undefined
  return typeof docUrl === "string" ? docUrl : undefined
}

/** A refusal's line, and under it the link to its code's docs when the service gave one. */
export const withDocs = (line: string, docUrl: string | undefined): string =>
  docUrl === undefined ? line : `${line}\n  docs: ${docUrl}`

/** A failed step as stderr shows it: `error: …`, and under it the link to its code's docs when the service gave one. */
export const failureLines = (message: string, docUrl: string | undefined): string =>
  `${withDocs(`error: ${message}`, docUrl)}\n`

export const parseCliArgs = (argv: ReadonlyArray<string>) =>
  parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      name: { type: "string" },
      email: { type: "string" },
      "owner-email": { type: "string" },
      account: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      request: { type: "string" },
      mode: { type: "string" },
      amount: { type: "string" },
      address: { type: "string" },
      eth: { type: "string" },
      url: { type: "string" },
      "forward-to": { type: "string" },
      events: { type: "string" },
      api: { type: "string" },
      key: { type: "string" },
      "rotate-secret": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false }
    }
  })

export type CliValues = ReturnType<typeof parseCliArgs>["values"]

export const print = (json: boolean, value: Readonly<Record<string, string | null>>) => {
  if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
  else for (const [key, v] of Object.entries(value)) process.stdout.write(`${key.padEnd(26)} ${v ?? "-"}\n`)
}
