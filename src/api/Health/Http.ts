import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Api } from "../../Api"
import { AppConfig } from "../../Config"
import { chainIdOf } from "../../Environment"
import { ServiceUnavailable } from "../Errors"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    return handlers.handle("health", () =>
      sql`select 1`.pipe(
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
