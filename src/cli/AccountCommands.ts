import { Effect } from "effect"
import { toId } from "../../services/domain/PrefixedId"
import { formatTimestamp } from "../../services/domain/Timestamp"
import { Accounts } from "../../services/merchants/Accounts"
import { accountOf, AccountsLive } from "./AccountsLayer"
import { type CliValues, print } from "./Output"
import { runCommand } from "./Run"
import { dashboardLink } from "./ServiceUrl"

const sandbox = (values: CliValues) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    // Reuse: the same account, so its issuers, payout addresses, requests and webhooks stay where they are.
    const account =
      values.account === undefined
        ? yield* accounts.create(values.name ?? "Sandbox merchant")
        : yield* accountOf(accounts, values.account)
    const session = yield* accounts.createSession(account.id)
    const key = yield* accounts.issueApiKey(account.id)
    return print(values.json === true, {
      account_id: toId("acct", account.id),
      dashboard_url: yield* dashboardLink(session.token),
      session_token: session.token,
      session_expires_at: formatTimestamp(session.expiresAt),
      api_key: key.apiKey,
      previous_key_valid_until:
        key.previousKeyValidUntil === null ? null : formatTimestamp(key.previousKeyValidUntil)
    })
  })

const accountsCreate = (values: CliValues) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const account = yield* accounts.create(values.name ?? "Merchant")
    const session = yield* accounts.createSession(account.id)
    return print(values.json === true, {
      account_id: toId("acct", account.id),
      environment: account.environment,
      session_token: session.token,
      session_expires_at: formatTimestamp(session.expiresAt)
    })
  })

const sessionsCreate = (values: CliValues) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const account = yield* accountOf(accounts, values.account)
    const session = yield* accounts.createSession(account.id)
    return print(values.json === true, {
      account_id: toId("acct", account.id),
      dashboard_url: yield* dashboardLink(session.token),
      session_token: session.token,
      session_expires_at: formatTimestamp(session.expiresAt)
    })
  })

const commands = {
  sandbox,
  "accounts create": accountsCreate,
  "sessions create": sessionsCreate
} as const

export type AccountCommand = keyof typeof commands | "accounts invite"

export const run = async (command: AccountCommand, values: CliValues) => {
  // The inviting commands load the members service and a mailer; the one-row commands stay without them.
  if (
    command === "accounts invite" ||
    (command === "accounts create" && values["owner-email"] !== undefined)
  ) {
    return (await import("./InviteCommands")).run(command, values)
  }
  return runCommand(Effect.scoped(Effect.provide(commands[command](values), AccountsLive)))
}
