import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../Errors"
import { ChainId } from "../Schemas"

export const TokenHealth = Schema.Struct({
  paused: Schema.Boolean.annotations({
    description:
      "True while the USDC token is paused by its issuer: every settlement and return waits and goes out by itself once it is unpaused."
  }),
  since: Schema.String.annotations({
    description: "When the token's state last changed, as the treasury saw it."
  }),
  checked_at: Schema.String.annotations({ description: "When the treasury last read the token." })
}).annotations({ identifier: "TokenHealth" })

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  environment: Schema.Literal("sandbox", "production"),
  chain_id: ChainId,
  database: Schema.Literal("ok"),
  token: Schema.NullOr(TokenHealth).annotations({
    description: "The USDC token as the treasury last read it; null before its first read."
  })
}).annotations({ identifier: "Health" })

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Check the service and its database")
  )
  .annotate(OpenApi.Description, "Liveness and readiness for load balancers and operators. No credential.") {}
