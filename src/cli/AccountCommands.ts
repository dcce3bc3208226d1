import { Effect, Layer, Option } from "effect"
import { toId, uuidFromId } from "../../services/domain/PrefixedId"
import { formatTimestamp } from "../../services/domain/Timestamp"
import { Accounts } from "../../services/merchants/Accounts"
import { Members } from "../../services/merchants/Members"
import { Bus } from "../../services/platform/Bus"
import { Mailer, mailerSettings } from "../../services/platform/Mailer"
import { CliDatabase } from "./Database"
import { CliError, type CliValues, print } from "./Output"
import { runCommand } from "./Run"

/**
 * The one-row commands: only the accounts service and the database (no chain, no bus connection, no app layer), so
 * they answer in well under a second (test/bench/cli.bench.ts).
 */
const AccountsLive = Accounts.Default.pipe(Layer.provide(Bus.inProcess), Layer.provideMerge(CliDatabase))

/**
 * The CLI mails an invitation through `SMTP_URL` when it is set; otherwise it mails nothing (the sandbox's logging
 * mailer would write to stdout, where `--json` promises one object) and the printed link is the way to hand it on.
 */
const CliMailer = Layer.unwrapEffect(
  Effect.map(mailerSettings, ({ smtpUrl, mailFrom }) =>
    Option.match(smtpUrl, {
      onNone: () => Layer.succeed(Mailer, { send: () => Effect.void, recent: () => [] }),
      onSome: (url) => Mailer.smtp(url, mailFrom)
    })
  )
)
const mailing = Effect.map(mailerSettings, ({ smtpUrl }) => Option.isSome(smtpUrl))

/** Accounts and members: the invitation commands (the members service reads the same database). */
const MembersLive = Members.Default.pipe(
  Layer.provide(Layer.mergeAll(Bus.inProcess, CliMailer)),
  Layer.provideMerge(AccountsLive)
)

/** An invitation of `email` to the account, mailed when SMTP is set; its one-time link, printed. */
const inviteTo = (accountId: string, email: string | undefined, option: string) =>
  Effect.gen(function* () {
    if (email === undefined || !/^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) {
      return yield* Effect.fail(new CliError(`${option} must be an email address`))
    }
    const created = yield* (yield* Members)
      .invite(accountId, email, null)
      .pipe(Effect.catchTags({ InvalidState: (e) => Effect.fail(new CliError(`${email}: ${e.message}`)) }))
    return {
      invite_id: toId("inv", created.invite.id),
      invite_email: created.invite.email,
      invite_link: created.link,
      invite_expires_at: formatTimestamp(created.invite.expiresAt),
      invite_mailed: (yield* mailing) ? "yes" : "no (no SMTP_URL: hand the link on yourself)"
    }
  })

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
    const owner = values["owner-email"]
    const account = yield* accounts.create(values.name ?? "Merchant")
    const session = yield* accounts.createSession(account.id)
    const invited = owner === undefined ? {} : yield* inviteTo(account.id, owner, "--owner-email")
    return print(values.json === true, {
      account_id: toId("acct", account.id),
      environment: account.environment,
      session_token: session.token,
      session_expires_at: formatTimestamp(session.expiresAt),
      ...invited
    })
  })

const accountsInvite = (values: CliValues) =>
  Effect.gen(function* () {
    const account = yield* accountOf(yield* Accounts, values.account)
    return print(values.json === true, {
      account_id: toId("acct", account.id),
      ...(yield* inviteTo(account.id, values.email, "--email"))
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
  "accounts invite": accountsInvite,
  "sessions create": sessionsCreate
} as const

export type AccountCommand = keyof typeof commands

export const run = (command: AccountCommand, values: CliValues) =>
  runCommand(
    Effect.scoped(
      // Only the commands that invite load the members service (and its mailer).
      command === "accounts invite" || (command === "accounts create" && values["owner-email"] !== undefined)
        ? Effect.provide(commands[command](values), MembersLive)
        : Effect.provide(commands[command](values) as Effect.Effect<void, CliError, Accounts>, AccountsLive)
    )
  )
