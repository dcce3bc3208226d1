import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AUDIT_ACTIONS } from "../../../services/domain/AuditActions"
import { uuidPattern } from "../../../services/domain/PrefixedId"
import { Timestamp } from "../../../services/domain/Timestamp"
import { IdentityUnauthorized, InvalidRequest, RateLimited, Unauthenticated } from "../Errors"
import { Authentication } from "../Security"
import { Limit, ListOf, SESSIONS_ONLY, withExample } from "../Schemas"

/** An audit entry's id: `aud_` and a UUIDv7, so ids sort by time. */
export const AuditEntryId = Schema.String.pipe(
  Schema.pattern(new RegExp(`^aud_${uuidPattern}$`), {
    message: () => "must be an aud_ id (the aud_ prefix and a canonical UUID)"
  })
).annotations({ identifier: "AuditEntryId" })

export const AuditEntry = withExample(
  Schema.Struct({
    id: AuditEntryId,
    action: Schema.Literal(...AUDIT_ACTIONS).annotations({
      description: "What changed, as `resource.event`."
    }),
    actor: Schema.Struct({
      type: Schema.Literal("member", "api_key", "operator"),
      id: Schema.NullOr(Schema.String).annotations({
        description:
          "The member's `mem_` id; for an API key its last four characters (keys have no id); null for the operator's CLI."
      }),
      label: Schema.String.annotations({
        description:
          "How a reader knows the actor: the member's address at the time, `API key …abcd`, or the operator."
      })
    }),
    target_id: Schema.NullOr(Schema.String).annotations({
      description:
        "The id of what changed (a `pa_`, `wh_`, `mem_`, `inv_`, `pk_` or `iss_` id, or `…abcd` for a key)."
    }),
    created_at: Timestamp,
    client: Schema.Struct({
      address: Schema.String.annotations({
        description:
          "The client's address: the socket's peer, or the last X-Forwarded-For hop behind a loopback proxy."
      }),
      user_agent: Schema.NullOr(Schema.String),
      request_id: Schema.NullOr(Schema.String).annotations({ description: "The change's `X-Request-Id`." })
    })
  }).annotations({
    identifier: "AuditEntry",
    description: "One change of account state made through a credential. Entries are never changed."
  }),
  {
    id: "aud_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b",
    action: "payout_address.created",
    actor: { type: "member", id: "mem_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7c", label: "ada@shop.example.com" },
    target_id: "pa_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7d",
    created_at: "2026-01-15T10:24:00.000Z",
    client: {
      address: "203.0.113.7",
      user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
      request_id: "0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7e"
    }
  }
)

export class AuditLogApi extends HttpApiGroup.make("auditLog")
  .add(
    HttpApiEndpoint.get("list", "/account/audit-log")
      .setUrlParams(Schema.Struct({ limit: Limit, starting_after: Schema.optional(AuditEntryId) }))
      .addSuccess(ListOf("entries", AuditEntry))
      .annotate(OpenApi.Summary, "List the account's audit log, newest first")
      .annotate(
        OpenApi.Description,
        `${SESSIONS_ONLY} Every change of account state made through a credential: members invited, joined and removed, API keys, payout addresses, issuers, passkeys and webhook endpoints; with who made it, from which client and in which request. Entries are kept \`AUDIT_LOG_RETENTION_DAYS\` days (default 400).`
      )
  )
  .addError(Unauthenticated)
  .addError(IdentityUnauthorized)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The account's audit log. Dashboard sessions only.") {}
