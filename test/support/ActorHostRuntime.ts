import { Layer, ManagedRuntime, Option, Redacted } from "effect"
import { ActorHost } from "../../services/actors/ActorHost"
import { Inspector } from "../../services/actors/StepInspector"
import { DepositRequests } from "../../services/depositRequests/DepositRequests"
import { LifecycleBodiesLive } from "../../services/depositRequests/LifecycleBodiesLive"
import { MerchantResourcesLive } from "../../services/merchants/MerchantResources"
import { ChangeFeed } from "../../services/platform/ChangeFeed"
import { DatabaseLive } from "../../services/platform/Database"
import { Ids } from "../../services/platform/Ids"
import { Metrics } from "../../services/platform/Metrics"
import { type AppConfigShape, settingsLayer } from "../../src/app/Config"
import { MessagingLive } from "../../src/app/Ports"

/**
 * The actor host over a database, with the services that create requests the production way: for tests and
 * benchmarks that step actors without HTTP. The messaging is the root's own choice (`NATS_URL`); the inspector is
 * silent.
 */
export const actorHostLayer = (databaseUrl: string, config: Partial<AppConfigShape> = {}) =>
  Layer.mergeAll(
    DepositRequests.Default,
    MerchantResourcesLive,
    ActorHost.Default,
    ChangeFeed.Default,
    Ids.Default,
    Metrics.Default
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(MessagingLive, Inspector.silent, LifecycleBodiesLive)),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(settingsLayer({ ...config, databaseUrl: Option.some(Redacted.make(databaseUrl)) }))
  )

export const actorHostRuntime = (databaseUrl: string, config: Partial<AppConfigShape> = {}) =>
  ManagedRuntime.make(actorHostLayer(databaseUrl, config))
