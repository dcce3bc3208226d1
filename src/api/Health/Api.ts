import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../Errors"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  environment: Schema.Literal("sandbox", "production"),
  chain_id: Schema.Number,
  database: Schema.Literal("ok")
}).annotations({ identifier: "Health" })

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Summary, "Check the service and its database")
  )
  .annotate(OpenApi.Description, "Liveness and readiness for load balancers and operators. No credential.") {}
