import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { Api } from "../../Api"
import { AppConfig } from "../../Config"
import { chainIdOf } from "../../Environment"
import { ServiceUnavailable } from "../Errors"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    // Load balancers poll health often: one database probe serves every check for half a second, so health
    // reflects the database (an outage shows within 500 ms) without a query per check.
    const probe = yield* Effect.cachedWithTTL(sql`select 1`, Duration.millis(500))
    return handlers.handle("health", () =>
      probe.pipe(
        Effect.as({
          status: "ok" as const,
          environment: config.serviceEnv,
          chain_id: chainIdOf(config.serviceEnv),
          database: "ok" as const
        }),
        Effect.catchAll(() => new ServiceUnavailable({ message: "The database does not answer." }))
      )
    )
  })
)
