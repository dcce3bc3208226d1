import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { LifecycleLog } from "../../services/actors/LifecycleLog"
import { describeDatabase } from "../../services/platform/Database"
import { rpcEndpointsOf } from "../../services/chain/ChainSettings"
import { embeddedChain, withChain } from "../../infra/chain/EmbeddedChain"
import { alreadyRunning, announceRunning } from "./AlreadyRunning"
import { ApiSettings, loadConfig, settingsLayer } from "./Config"
import { baseUrlOf, sandboxBanner, withSandboxTreasury } from "./SandboxStart"
import { AppLive } from "./Server"
import { startupRefusals } from "./StartupChecks"

const program = Effect.gen(function* () {
  const config = yield* loadConfig().pipe(
    Effect.catchAll((line) =>
      Effect.sync(() => {
        process.stderr.write(`${line}\n`)
        process.exit(78)
      })
    )
  )
  const refusals = yield* startupRefusals(config)
  if (refusals.length > 0) {
    process.stderr.write(`refusing to start: ${refusals.join("; ")}\n`)
    process.exit(78)
  }
  // Before anything embedded starts: a second start in the same folder would run a second chain on its files.
  const running = yield* alreadyRunning(config)
  if (Option.isSome(running)) {
    process.stderr.write(`refusing to start: ${running.value}\n`)
    process.exit(1)
  }
  // The sandbox with no CHAIN_RPC_URL gets the embedded local chain, stopped with the service.
  const effective = withSandboxTreasury(
    rpcEndpointsOf(config).length === 0 && config.serviceEnv === "sandbox"
      ? yield* Effect.map(embeddedChain(config), (chain) => withChain(config, chain))
      : config
  )
  yield* Effect.logInfo(
    `starting ${config.serviceEnv} on ${describeDatabase(config)}; bus: ${Option.match(config.natsUrl, { onNone: () => "in-process", onSome: (url) => `${url} (stream replicas ${config.natsStreamReplicas})` })}; chain: ${rpcEndpointsOf(effective).join(", ") || "none"}${rpcEndpointsOf(config).length === 0 && rpcEndpointsOf(effective).length > 0 ? " (embedded)" : ""}, token ${Option.getOrElse(effective.tokenAddress, () => "none")}`
  )
  const sandbox = config.serviceEnv === "sandbox"
  const app = yield* Layer.build(
    AppLive.pipe(
      Layer.provide(ApiSettings.Default),
      Layer.provide(settingsLayer(effective)),
      // The sandbox tells each lifecycle change in one line; production's log stays as it is.
      Layer.provide(sandbox ? LifecycleLog.Default : Layer.empty)
    )
  )
  // The port is open (the layer is built): tell a newcomer what to do next.
  const address = Context.get(app, HttpServer.HttpServer).address
  const ownsFolder =
    Option.isNone(config.databaseUrl) || rpcEndpointsOf(config).length < rpcEndpointsOf(effective).length
  if (ownsFolder && address._tag === "TcpAddress")
    yield* announceRunning(
      config.dataDir,
      baseUrlOf(config.publicBaseUrl, address.hostname, address.port),
      yield* Clock.currentTimeMillis
    )
  if (sandbox && address._tag === "TcpAddress") {
    yield* Effect.logInfo(
      sandboxBanner({
        baseUrl: baseUrlOf(config.publicBaseUrl, address.hostname, address.port),
        dashboardOrigin: Option.getOrElse(config.dashboardOrigin, () =>
          baseUrlOf(config.publicBaseUrl, address.hostname, address.port)
        ),
        mailRelay: Option.isSome(config.smtpUrl),
        webhooksAllowPrivate: config.webhooksAllowPrivate
      })
    )
  }
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
