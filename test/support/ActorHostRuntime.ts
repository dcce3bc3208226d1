import { Layer, ManagedRuntime, Option, Redacted } from "effect"
import { ActorHost } from "../../services/actors/ActorHost"
import { Bus } from "../../services/platform/Bus"
import { ChangeFeed } from "../../services/platform/ChangeFeed"
import { DatabaseLive } from "../../services/platform/Database"
import { DepositRequests } from "../../services/depositRequests/DepositRequests"
import { LifecycleBodiesLive } from "../../services/depositRequests/LifecycleBodiesLive"
import { EventStream } from "../../services/platform/eventStream/EventStream"
import { Ids } from "../../services/platform/Ids"
import { Inspector } from "../../services/actors/StepInspector"
import { MerchantRecordsLive } from "../../services/merchants/MerchantResources"
import { Metrics } from "../../services/platform/Metrics"
import { type AppConfigShape, settingsLayer } from "../../src/Config"

/**
 * The actor host over a database, with the services that create requests the production way: for tests and
 * benchmarks that step actors without HTTP.
 */
export const actorHostLayer = (databaseUrl: string, config: Partial<AppConfigShape> = {}) =>
  Layer.mergeAll(DepositRequests.layer, MerchantRecordsLive).pipe(
    Layer.provideMerge(ActorHost.layer),
    Layer.provideMerge(
      Layer.mergeAll(ChangeFeed.layer, Inspector.silent, EventStream.layer, LifecycleBodiesLive)
    ),
    Layer.provideMerge(Layer.mergeAll(Ids.layer, Bus.layer, Metrics.layer)),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(settingsLayer({ ...config, databaseUrl: Option.some(Redacted.make(databaseUrl)) }))
  )

export const actorHostRuntime = (databaseUrl: string, config: Partial<AppConfigShape> = {}) =>
  ManagedRuntime.make(actorHostLayer(databaseUrl, config))
