import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { ChainReadiness } from "../../services/chain/ChainReadiness"
import { LifecycleLog } from "../../services/actors/LifecycleLog"
import { describeDatabase } from "../../services/platform/Database"
import { rpcEndpointsOf } from "../../services/chain/ChainSettings"
import { embeddedChain, withChain } from "../../infra/chain/EmbeddedChain"
import { alreadyRunning, announceRunning } from "./AlreadyRunning"
import { ApiSettings, loadConfig, settingsLayer } from "./Config"
import { baseUrlOf, sandboxBanner, withSandboxTreasury } from "./SandboxStart"
import { AppLive } from "./Server"
import { startupRefusals } from "./StartupChecks"

const refuse = (refusals: ReadonlyArray<string>) => {
  process.stderr.write(`refusing to start: ${refusals.join("; ")}\n`)
  process.exit(78)
}

/**
 * A chain RPC that does not answer at start does not stop the instance (a supervisor restarting it in a loop helps
 * nobody): it serves unready and checks the chain again every few seconds; once it answers, the checks it could not
 * make run, and a wrong chain or token then stops the instance as it would have at start.
 */
const awaitChain = (
  config: Parameters<typeof startupRefusals>[0],
  readiness: ChainReadiness,
  unanswered: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    yield* readiness.waiting(unanswered.join("; "))
    yield* Effect.logWarning(
      `starting unready: ${unanswered.join("; ")}; /v1/health answers 503 until the chain answers`
    )
    const recheck = Effect.gen(function* () {
      const again = yield* startupRefusals(config)
      if (again.refusals.length > 0) refuse(again.refusals)
      if (again.unanswered.length > 0) return yield* Effect.fail(again.unanswered)
      yield* readiness.ready
      yield* Effect.logInfo("the chain answers: ready")
    })
    yield* Effect.forkScoped(Effect.retry(recheck, Schedule.spaced(Duration.millis(config.chainRpcProbeMs))))
  })

const program = Effect.gen(function* () {
  const config = yield* loadConfig().pipe(
    Effect.catchAll((line) =>
      Effect.sync(() => {
        process.stderr.write(`${line}\n`)
        process.exit(78)
      })
    )
  )
  const checks = yield* startupRefusals(config)
  if (checks.refusals.length > 0) refuse(checks.refusals)
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
  if (checks.unanswered.length > 0)
    yield* awaitChain(config, Context.get(app, ChainReadiness), checks.unanswered)
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
