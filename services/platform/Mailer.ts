import { Config, Context, Data, Effect, Layer, Option } from "effect"
import nodemailer from "nodemailer"
import { optionalSetting } from "./Settings"

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

/**
 * Outgoing mail. With `SMTP_URL` it goes through that relay (nodemailer); without it the sandbox keeps the last
 * messages in memory and logs each one, so a developer reads the code in the service's output.
 */
export class Mailer extends Context.Tag("deposits/Mailer")<
  Mailer,
  {
    readonly send: (mail: Mail) => Effect.Effect<void, MailError>
    readonly recent: () => ReadonlyArray<Mail>
  }
>() {
  static readonly layer = Layer.scoped(
    Mailer,
    Effect.gen(function* () {
      const config = yield* mailerSettings
      const kept: Array<Mail> = []
      if (Option.isNone(config.smtpUrl)) {
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
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport(config.smtpUrl.pipe(Option.getOrThrow))),
        (t) => Effect.sync(() => t.close())
      )
      return {
        send: (mail) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: config.mailFrom, ...mail }),
            catch: (cause) => new MailError({ message: "the mail relay refused the message", cause })
          }).pipe(Effect.asVoid),
        recent: () => kept
      }
    })
  )
}
