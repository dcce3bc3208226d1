import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { toId } from "../../../services/domain/PrefixedId"
import { type AuditEntry, AuditLog } from "../../../services/merchants/AuditLog"
import { Api } from "../Api"
import { requireSession } from "../middleware/Authentication"

const entryWire = (entry: AuditEntry) => ({
  id: `aud_${entry.id}`,
  action: entry.action,
  actor: {
    type: entry.actor.kind,
    id:
      entry.actor.kind === "member" && entry.actor.id !== null ? toId("mem", entry.actor.id) : entry.actor.id,
    label: entry.actor.label
  },
  target_id: entry.targetId,
  created_at: entry.at,
  client: {
    address: entry.client.address,
    user_agent: entry.client.userAgent,
    request_id: entry.client.requestId
  }
})

export const AuditLogLive = HttpApiBuilder.group(Api, "auditLog", (handlers) =>
  Effect.gen(function* () {
    const log = yield* AuditLog
    return handlers.handle("list", ({ urlParams }) =>
      Effect.gen(function* () {
        const identity = yield* requireSession("The audit log")
        const after = urlParams.starting_after?.slice("aud_".length)
        const page = yield* log.list(identity.accountId, urlParams.limit, after)
        const last = page.entries.at(-1)
        return {
          entries: page.entries.map(entryWire),
          next_cursor: page.more && last !== undefined ? `aud_${last.id}` : null
        }
      })
    )
  })
)
