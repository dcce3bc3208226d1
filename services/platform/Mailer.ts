import { Config, Context, Data, Effect, Layer } from "effect"
import nodemailer from "nodemailer"
import { optionalSetting } from "./Settings"
import { withMethodSpans } from "./Spans"

export class MailError extends Data.TaggedError("MailError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

/** `SMTP_URL` (unset: mail is kept in memory and logged) and `MAIL_FROM`. */
export const mailerSettings = Config.all({
  smtpUrl: optionalSetting("SMTP_URL", "must be an smtp:// or smtps:// URL", (u) => /^smtps?:\/\//.test(u)),
  mailFrom: Config.string("MAIL_FROM").pipe(Config.withDefault("Deposits <no-reply@deposits.localhost>"))
})

export interface MailerShape {
  readonly send: (mail: Mail) => Effect.Effect<void, MailError>
  readonly recent: () => ReadonlyArray<Mail>
}

/** The sandbox's mail: the last messages kept in memory and each one logged, so a developer reads the code there. */
const logged = (): MailerShape => {
  const kept: Array<Mail> = []
  return {
    send: (mail) =>
      Effect.zipRight(
        Effect.sync(() => {
          kept.push(mail)
          if (kept.length > 100) kept.shift()
        }),
        Effect.logInfo(`mail to ${mail.to} (not sent: no SMTP_URL): ${mail.subject}\n${mail.text}`)
      ),
    recent: () => kept
  }
}

/** Mail through an SMTP relay (nodemailer), the transport closed with the scope. */
const overSmtp = (smtpUrl: string, mailFrom: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => nodemailer.createTransport(smtpUrl)),
      (t) => Effect.sync(() => t.close())
    ),
    (transport): MailerShape => {
      const kept: Array<Mail> = []
      return {
        send: (mail) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: mailFrom, ...mail }),
            catch: (cause) => new MailError({ message: "the mail relay refused the message", cause })
          }).pipe(Effect.asVoid),
        recent: () => kept
      }
    }
  )

const traced = (mailer: MailerShape) => withMethodSpans("Mailer", mailer, ["send"])

/**
 * Outgoing mail, a port with one layer per implementation: `smtp(url, from)` through a relay, `log` kept in memory
 * and logged (the sandbox). The composition root chooses (`src/app/Ports.ts`, from `SMTP_URL`).
 */
export class Mailer extends Context.Tag("deposits/Mailer")<Mailer, MailerShape>() {
  static readonly log = Layer.sync(Mailer, () => traced(logged()))
  static readonly smtp = (smtpUrl: string, mailFrom: string) =>
    Layer.scoped(Mailer, Effect.map(overSmtp(smtpUrl, mailFrom), traced))
}
