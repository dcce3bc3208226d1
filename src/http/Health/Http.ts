import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { Api } from "../Api"
import { ApiSettings } from "../middleware/ApiSettings"
import { chainIdOf } from "../../../services/domain/Environment"
import { formatTimestamp } from "../../../services/domain/Timestamp"
import { ServiceUnavailable } from "../Errors"
import { ChainReadiness } from "../../../services/chain/ChainReadiness"

const PROBE_TTL_MS = 500

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* ApiSettings
    const readiness = yield* ChainReadiness
    const chainUnanswered = new ServiceUnavailable({
      message: "The chain node does not answer yet: this instance is not ready."
    })
    // Load balancers poll health often: one database probe serves every check for half a second, so health
    // reflects the database (an outage shows within 500 ms) without a query per check. A plain variable, not a
    // locked cache: two checks refreshing it at once cost one extra probe, never a wrong answer.
    const healthy = {
      status: "ok" as const,
      environment: config.serviceEnv,
      chain_id: chainIdOf(config.serviceEnv),
      database: "ok" as const
    }
    type Token = { readonly paused: boolean; readonly since: string; readonly checked_at: string } | null
    let last: { readonly atMs: number; readonly ok: boolean; readonly token: Token } | undefined
    const unavailable = new ServiceUnavailable({ message: "The database does not answer." })
    const answer = (ok: boolean, token: Token) =>
      ok ? Effect.succeed({ ...healthy, token }) : Effect.fail(unavailable)
    // The probe reads the token's state the treasury records (it runs on one instance), so every instance tells.
    const refresh = (nowMs: number) =>
      sql<{ paused: boolean; changed_at: Date; checked_at: Date }>`
        select paused, changed_at, checked_at from token_status order by paused desc, checked_at desc limit 1`.pipe(
        Effect.map(
          (rows): Token =>
            rows[0] === undefined
              ? null
              : {
                  paused: rows[0].paused,
                  since: formatTimestamp(rows[0].changed_at),
                  checked_at: formatTimestamp(rows[0].checked_at)
                }
        ),
        Effect.map((token) => ({ ok: true, token })),
        Effect.orElseSucceed(() => ({ ok: false, token: null as Token })),
        Effect.flatMap(({ ok, token }) => {
          last = { atMs: nowMs, ok, token }
          return answer(ok, token)
        })
      )
    return handlers.handle("health", () =>
      readiness.waitingFor() !== undefined
        ? Effect.fail(chainUnanswered)
        : Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
            last !== undefined && nowMs - last.atMs < PROBE_TTL_MS && nowMs >= last.atMs
              ? answer(last.ok, last.token)
              : refresh(nowMs)
          )
    )
  })
)
