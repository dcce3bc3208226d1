import { Effect, Layer, Option } from "effect"
import { Inspector, inspectUrlSetting } from "../../services/actors/StepInspector"
import { Bus, natsUrlSetting } from "../../services/platform/Bus"
import { EventStream } from "../../services/platform/eventStream/EventStream"
import { Mailer, mailerSettings } from "../../services/platform/Mailer"
import { ObjectStore, objectStoreSettings } from "../../services/platform/objectStore/ObjectStore"

/**
 * Where the composition root chooses each port's implementation from the configuration: the services offer one
 * layer per implementation and never read which one to be.
 */

/** `NATS_URL`: the bus over NATS with JetStream streams, else both in process (the embedded defaults). */
export const MessagingLive = Layer.unwrapEffect(
  Effect.map(
    natsUrlSetting,
    Option.match({
      onNone: () => Layer.merge(Bus.inProcess, EventStream.inProcess),
      onSome: (url) => EventStream.jetStream.pipe(Layer.provideMerge(Bus.nats(url)))
    })
  )
)

/** `SMTP_URL`: mail through that relay, else kept and logged (the sandbox). */
export const MailerLive = Layer.unwrapEffect(
  Effect.map(mailerSettings, ({ smtpUrl, mailFrom }) =>
    Option.match(smtpUrl, { onNone: () => Mailer.log, onSome: (url) => Mailer.smtp(url, mailFrom) })
  )
)

/** `S3_BUCKET`: objects in that bucket, else in the database (the embedded store). */
export const ObjectStoreLive = Layer.unwrapEffect(
  Effect.map(objectStoreSettings, (settings) =>
    Option.match(settings.s3Bucket, {
      onNone: () => ObjectStore.embedded,
      onSome: (bucket) => ObjectStore.s3(bucket, settings)
    })
  )
)

/** `INSPECT_URL`: every actor step streamed to that Stately inspector, else nowhere. */
export const InspectorLive = Layer.unwrapEffect(
  Effect.map(
    inspectUrlSetting,
    Option.match({ onNone: () => Inspector.silent, onSome: (url) => Inspector.webSocket(url) })
  )
)
