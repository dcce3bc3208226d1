import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { describeDatabase } from "../services/Database"
import { AppConfig, loadConfig } from "./Config"
import { AppLive } from "./Server"

const program = Effect.gen(function* () {
  const config = yield* loadConfig().pipe(
    Effect.catchAll((line) =>
      Effect.sync(() => {
        process.stderr.write(`${line}\n`)
        process.exit(78)
      })
    )
  )
  yield* Effect.logInfo(
    `starting ${config.serviceEnv} on ${describeDatabase(config)}; bus: ${Option.getOrElse(config.natsUrl, () => "in-process")}`
  )
  return yield* Layer.launch(AppLive.pipe(Layer.provide(AppConfig.layerWith(config))))
})

NodeRuntime.runMain(program)
