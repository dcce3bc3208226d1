import { connect, type NatsConnection } from "@nats-io/transport-node"
import { Context, Data, Effect, Layer, Option } from "effect"
import { EventEmitter } from "node:events"
import { optionalSetting } from "./Settings"

const isNatsServer = (url: string) => /^(nats|tls):\/\/[^\s,]+$|^[\w.-]+:\d+$/.test(url)

/**
 * `NATS_URL`: one server, or several separated by commas (the nodes of a cluster: the client connects to one and
 * moves to another when it dies). Absent, the in-process bus.
 */
export const natsUrlSetting = optionalSetting(
  "NATS_URL",
  "must be nats:// URLs or host:port, separated by commas",
  (list) => natsServersOf(list).every(isNatsServer)
)

/** The servers a `NATS_URL` names, in its order. */
export const natsServersOf = (list: string): ReadonlyArray<string> => list.split(",").map((url) => url.trim())

export class BusError extends Data.TaggedError("BusError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * Notices between instances: fire-and-forget hints such as "request X changed to version N". They may be lost
 * (PostgreSQL is the record, and a waiter re-reads it), so core NATS is the transport, or an in-process emitter
 * on the embedded defaults. Subjects are lower-case dotted; `*` matches one token.
 */
export interface BusShape {
  readonly kind: "nats" | "in-process"
  readonly notify: (subject: string, data: string) => Effect.Effect<void>
  /** Sends several notices in one effect, in order (a commit's changed rows). */
  readonly notifyAll: (
    notices: ReadonlyArray<readonly [subject: string, data: string]>
  ) => Effect.Effect<void>
  /** Listens until the scope closes. */
  readonly listen: (
    subject: string,
    onMessage: (subject: string, data: string) => void
  ) => Effect.Effect<void, never, import("effect").Scope.Scope>
  /** The NATS connection, for JetStream users; none in process. */
  readonly nats: Option.Option<NatsConnection>
}

/** A subject pattern as a test, made once per listener: every notice is tested by every listener. */
const matcher = (pattern: string) => {
  const p = pattern.split(".")
  return (subject: string) => {
    let from = 0
    for (let i = 0; i < p.length; i++) {
      if (from > subject.length) return false
      if (p[i] === ">") return true
      const dot = subject.indexOf(".", from)
      const end = dot === -1 ? subject.length : dot
      if (p[i] !== "*" && (end - from !== p[i]!.length || !subject.startsWith(p[i]!, from))) return false
      from = end + 1
    }
    return from > subject.length
  }
}

const inProcess = (): BusShape => {
  const emitter = new EventEmitter()
  emitter.setMaxListeners(0)
  return {
    kind: "in-process",
    nats: Option.none(),
    // Every commit notifies: untraced, since a span per call costs far more than the call here.
    notify: (subject, data) => Effect.sync(() => emitter.emit("message", subject, data)),
    notifyAll: (notices) =>
      Effect.sync(() => {
        for (const [subject, data] of notices) emitter.emit("message", subject, data)
      }),
    listen: Effect.fn("Bus.listen")((pattern: string, onMessage: (subject: string, data: string) => void) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const matches = matcher(pattern)
          const listener = (subject: string, data: string) => {
            if (matches(subject)) onMessage(subject, data)
          }
          emitter.on("message", listener)
          return listener
        }),
        (listener) => Effect.sync(() => emitter.off("message", listener))
      ).pipe(Effect.asVoid)
    )
  }
}

const overNats = (nc: NatsConnection): BusShape => ({
  kind: "nats",
  nats: Option.some(nc),
  // Every commit notifies: untraced, since a span per call costs far more than the call here.
  notify: (subject, data) =>
    Effect.sync(() => nc.publish(subject, data)).pipe(
      Effect.catchAllDefect((cause) => Effect.logWarning("notice not published", cause))
    ),
  // One notice refused (a closed connection) leaves the rest unsent, as they would be refused too.
  notifyAll: (notices) =>
    Effect.sync(() => {
      for (const [subject, data] of notices) nc.publish(subject, data)
    }).pipe(Effect.catchAllDefect((cause) => Effect.logWarning("notices not published", cause))),
  listen: Effect.fn("Bus.listen")((subject: string, onMessage: (subject: string, data: string) => void) =>
    Effect.acquireRelease(
      Effect.sync(() =>
        nc.subscribe(subject, { callback: (_err, msg) => onMessage(msg.subject, msg.string()) })
      ),
      (sub) => Effect.sync(() => sub.unsubscribe())
    ).pipe(Effect.asVoid)
  )
})

/**
 * Connects to NATS for the scope's life, draining the connection when it closes. With several servers the client
 * tries them in turn, and after a loss reconnects to any of them (or to a node the cluster told it about).
 */
const connectNats = (list: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => connect({ servers: [...natsServersOf(list)], name: "deposits", maxReconnectAttempts: -1 }),
      catch: (cause) => new BusError({ message: `cannot connect to NATS at ${list}`, cause })
    }),
    (c) => Effect.promise(() => c.drain().catch(() => c.close()))
  )

/**
 * The bus port: one layer per implementation (`inProcess`, `nats(url)`); the composition root chooses
 * (`src/app/Ports.ts`, from `NATS_URL`).
 */
export class Bus extends Context.Tag("deposits/Bus")<Bus, BusShape>() {
  static readonly inProcess = Layer.sync(Bus, inProcess)
  /** `servers`: a `NATS_URL`, one URL or several separated by commas. */
  static readonly nats = (servers: string) => Layer.scoped(Bus, Effect.map(connectNats(servers), overNats))
}
