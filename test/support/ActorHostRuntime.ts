import { Layer, ManagedRuntime, Option, Redacted } from "effect"
import { ActorHost } from "../../services/ActorHost"
import { ChangeFeed } from "../../services/ChangeFeed"
import { Bus } from "../../services/Bus"
import { DatabaseLive } from "../../services/Database"
import { Ids } from "../../services/Ids"
import { Inspector } from "../../services/Inspector"
import { type AppConfigShape, settingsLayer } from "../../src/Config"

/** The actor host alone over a database: for tests and benchmarks that step actors without HTTP. */
export const actorHostRuntime = (databaseUrl: string, config: Partial<AppConfigShape> = {}) =>
  ManagedRuntime.make(
    ActorHost.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(ChangeFeed.layer, Inspector.silent)),
      Layer.provideMerge(Layer.mergeAll(Ids.layer, Bus.inProcess)),
      Layer.provideMerge(DatabaseLive),
      Layer.provide(settingsLayer({ ...config, databaseUrl: Option.some(Redacted.make(databaseUrl)) }))
    )
  )
