import { Context, Effect, Layer, Option } from "effect"
import { sandboxLayer } from "./Sandbox"
import { type ReceivedMail, startSmtpInbox } from "./SmtpInbox"
import type { startService } from "./Service"

/** What the loopback SMTP inbox received so far, in order of arrival. */
export class Inbox extends Context.Tag("test/Inbox")<Inbox, ReadonlyArray<ReceivedMail>>() {}

/**
 * A real SMTP inbox on loopback (refusing the recipients `refuse` picks) and a Sandbox service that mails through
 * it, with these other start options; the service stops, then the inbox closes.
 */
export const mailingSandboxLayer = (
  options: Parameters<typeof startService>[0] & { readonly refuse?: (address: string) => boolean } = {}
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const { refuse, ...start } = options
      const smtp = yield* Effect.acquireRelease(
        Effect.promise(() => startSmtpInbox(refuse)),
        (smtp) => Effect.promise(() => smtp.close())
      )
      return Layer.merge(
        Layer.succeed(Inbox, smtp.inbox),
        sandboxLayer(() => ({ ...start, config: { ...start.config, smtpUrl: Option.some(smtp.url) } }))
      )
    })
  )
