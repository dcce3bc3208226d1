import { Effect, Layer } from "effect"
import { LifecycleBodies } from "../actors/LifecycleBodies"
import { chainIdOf } from "../domain/Environment"
import { publicBaseUrl, serviceEnv } from "../platform/Settings"
import { lifecycleBodiesOf } from "./DepositRequestWire"

/** The actor host's lifecycle bodies: the webhook payloads of this room's wire view. */
export const LifecycleBodiesLive = Layer.effect(
  LifecycleBodies,
  Effect.gen(function* () {
    const forStep = lifecycleBodiesOf(chainIdOf(yield* serviceEnv), yield* publicBaseUrl)
    return LifecycleBodies.of({ forStep })
  })
)
