import { Effect, Layer, Option } from "effect"
import { toId } from "../../services/domain/PrefixedId"
import { formatTimestamp } from "../../services/domain/Timestamp"
import { Accounts } from "../../services/merchants/Accounts"
import { Members } from "../../services/merchants/Members"
import { Bus } from "../../services/platform/Bus"
import { Mailer, mailerSettings } from "../../services/platform/Mailer"
import { accountOf, AccountsLive } from "./AccountsLayer"
import { CliError, type CliValues, print } from "./Output"
import { runCommand } from "./Run"

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

/** `accounts create --owner-email`: the account, an operator session, and its owner's invitation. */
const accountsCreate = (values: CliValues) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const account = yield* accounts.create(values.name ?? "Merchant")
    const session = yield* accounts.createSession(account.id)
    const invited = yield* inviteTo(account.id, values["owner-email"], "--owner-email")
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

const commands = { "accounts create": accountsCreate, "accounts invite": accountsInvite } as const

export const run = (command: keyof typeof commands, values: CliValues) =>
  runCommand(Effect.scoped(Effect.provide(commands[command](values), MembersLive)))
