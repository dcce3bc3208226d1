import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { Api } from "../../Api"
import { ApiSettings } from "../../middleware/ApiSettings"
import { chainIdOf } from "../../../services/domain/Environment"
import { ServiceUnavailable } from "../Errors"

const PROBE_TTL_MS = 500

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* ApiSettings
    // Load balancers poll health often: one database probe serves every check for half a second, so health
    // reflects the database (an outage shows within 500 ms) without a query per check. A plain variable, not a
    // locked cache: two checks refreshing it at once cost one extra probe, never a wrong answer.
    const healthy = {
      status: "ok" as const,
      environment: config.serviceEnv,
      chain_id: chainIdOf(config.serviceEnv),
      database: "ok" as const
    }
    let last: { readonly atMs: number; readonly ok: boolean } | undefined
    const unavailable = new ServiceUnavailable({ message: "The database does not answer." })
    const answer = (ok: boolean) => (ok ? Effect.succeed(healthy) : Effect.fail(unavailable))
    const refresh = (nowMs: number) =>
      sql`select 1`.pipe(
        Effect.as(true),
        Effect.orElseSucceed(() => false),
        Effect.flatMap((ok) => {
          last = { atMs: nowMs, ok }
          return answer(ok)
        })
      )
    return handlers.handle("health", () =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        last !== undefined && nowMs - last.atMs < PROBE_TTL_MS && nowMs >= last.atMs
          ? answer(last.ok)
          : refresh(nowMs)
      )
    )
  })
)
