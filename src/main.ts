import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { describeDatabase } from "../services/platform/Database"
import { rpcEndpointsOf } from "../services/chain/ChainSettings"
import { embeddedChain, withChain } from "../infra/chain/EmbeddedChain"
import { ApiSettings, loadConfig, settingsLayer } from "./Config"
import { withSandboxTreasury } from "./SandboxStart"
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
  // The sandbox with no CHAIN_RPC_URL gets the embedded local chain, stopped with the service.
  const effective = withSandboxTreasury(
    rpcEndpointsOf(config).length === 0 && config.serviceEnv === "sandbox"
      ? yield* Effect.map(embeddedChain(config), (chain) => withChain(config, chain))
      : config
  )
  yield* Effect.logInfo(
    `starting ${config.serviceEnv} on ${describeDatabase(config)}; bus: ${Option.getOrElse(config.natsUrl, () => "in-process")}; chain: ${rpcEndpointsOf(effective).join(", ") || "none"}${rpcEndpointsOf(config).length === 0 && rpcEndpointsOf(effective).length > 0 ? " (embedded)" : ""}, token ${Option.getOrElse(effective.tokenAddress, () => "none")}`
  )
  return yield* Layer.launch(
    AppLive.pipe(Layer.provide(ApiSettings.layer), Layer.provide(settingsLayer(effective)))
  )
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
