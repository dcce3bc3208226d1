import { createWebSocketInspector } from "@statelyai/inspect"
import { Config, Context, Effect, Layer } from "effect"
import { depositRequestMachine } from "../../machines/DepositRequest"

/** `INSPECT_URL`: the Stately inspector's WebSocket; unset, nothing is sent. */
export const inspectUrlSetting = Config.option(Config.string("INSPECT_URL"))

export interface InspectorShape {
  /** A request's actor came to life with its first snapshot. */
  readonly created: (actorId: string, snapshot: unknown) => void
  /** A request's actor took one event and reached a snapshot. */
  readonly stepped: (actorId: string, event: { readonly type: string }, snapshot: unknown) => void
}

const silent: InspectorShape = { created: () => {}, stepped: () => {} }

/**
 * The inspector port: every actor step streamed to a Stately inspector over a WebSocket, or nothing; the
 * composition root chooses from `INSPECT_URL`. The host steps actors with the pure `transition()`, so these are
 * manual inspection events: actor, event, snapshot.
 */
export class Inspector extends Context.Tag("deposits/Inspector")<Inspector, InspectorShape>() {
  /** Nothing is sent (no `INSPECT_URL`). */
  static readonly silent = Layer.succeed(Inspector, silent)
  /** Every step to the Stately inspector listening at `url`. */
  static readonly webSocket = (url: string) =>
    Layer.scoped(
      Inspector,
      Effect.gen(function* () {
        const inspector = yield* Effect.acquireRelease(
          Effect.sync(() => createWebSocketInspector({ url, autoStart: true })),
          (i) => Effect.sync(() => i.stop())
        )
        const definition = JSON.stringify(depositRequestMachine.config)
        type Snapshot = NonNullable<Parameters<typeof inspector.actor>[1]>
        yield* Effect.logInfo(`streaming actor steps to the Stately inspector at ${url}`)
        // Stately's inspector draws an actor only from its announcement: one restored from the database (created
        // before this process, or on another instance) is announced, with the definition, before its first step.
        const announced = new Set<string>()
        const announce = (actorId: string, snapshot: unknown) => {
          if (announced.size >= 10_000) announced.clear()
          announced.add(actorId)
          inspector.actor(actorId, snapshot as Snapshot, { definition, rootId: actorId })
        }
        return {
          created: announce,
          stepped: (actorId, event, snapshot) => {
            if (!announced.has(actorId)) announce(actorId, snapshot)
            inspector.event(actorId, { ...event })
            inspector.snapshot(actorId, snapshot as Snapshot, { event: { ...event } })
          }
        } satisfies InspectorShape
      })
    )
}
