import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { Bus } from "./Bus"
import type { EventStreamShape } from "./eventStream/Contract"
import { makeInProcessStream } from "./eventStream/InProcessStream"
import { makeJetStream } from "./eventStream/JetStreamTransport"

export {
  EventStreamError,
  type EventStreamShape,
  type Publication,
  type StreamMessage
} from "./eventStream/Contract"

export class EventStream extends Context.Tag("deposits/EventStream")<EventStream, EventStreamShape>() {
  static readonly inProcess = Layer.sync(EventStream, makeInProcessStream)
  /** JetStream over the bus's NATS connection (the deployment's own streams), or in process when the bus is. */
  static readonly layer = Layer.scoped(
    EventStream,
    Effect.gen(function* () {
      const bus = yield* Bus
      if (Option.isNone(bus.nats)) return makeInProcessStream()
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ stream_namespace: string }>`select stream_namespace from deployment`
      return yield* makeJetStream(bus.nats.value, rows[0]?.stream_namespace ?? "default")
    })
  )
}
