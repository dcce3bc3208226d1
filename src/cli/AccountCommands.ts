import { Effect, Layer, Option } from "effect"
import { toId, uuidFromId } from "../../services/domain/PrefixedId"
import { formatTimestamp } from "../../services/domain/Timestamp"
import { Accounts } from "../../services/merchants/Accounts"
import { Bus } from "../../services/platform/Bus"
import { CliDatabase } from "./Database"
import { CliError, type CliValues, print } from "./Output"
import { runCommand } from "./Run"

/**
 * The one-row commands: only the accounts service and the database (no chain, no bus connection, no app layer), so
 * they answer in well under a second (test/bench/cli.bench.ts).
 */
const AccountsLive = Accounts.Default.pipe(Layer.provide(Bus.inProcess), Layer.provideMerge(CliDatabase))

const accountOf = (accounts: Accounts, option: string | undefined) =>
  Effect.gen(function* () {
    const uuid = uuidFromId("acct", option ?? "")
    if (uuid === undefined) return yield* Effect.fail(new CliError("--account must be an acct_ id"))
    const account = yield* accounts.get(uuid)
    if (Option.isNone(account)) return yield* Effect.fail(new CliError(`no account ${option}`))
    return account.value
  })

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
      session_token: session.token,
      session_expires_at: formatTimestamp(session.expiresAt)
    })
  })

const commands = {
  sandbox,
  "accounts create": accountsCreate,
  "sessions create": sessionsCreate
} as const

export type AccountCommand = keyof typeof commands

export const run = (command: AccountCommand, values: CliValues) =>
  runCommand(Effect.scoped(Effect.provide(commands[command](values), AccountsLive)))
