import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { uuidFromId } from "../domain/PrefixedId"
import { Mailer } from "../platform/Mailer"
import type { AuditAction, AuditEntry } from "./AuditLog"
import { dashboardLink, dashboardOriginSetting } from "./MemberSettings"

/** What a notice says happened, and where in the dashboard it is undone. */
interface Notice {
  readonly what: string
  readonly undo: string
  readonly view: (targetId: string | null) => string
}

const team = () => "/team"

/**
 * The one place that decides which audit actions mail every member (infra/decisions/0076): the changes that hand
 * someone the account's money or its credentials. Edits of records, revocations and removals of one's own
 * passkeys are in the log but mail nobody.
 */
export const NOTICES: Partial<Record<AuditAction, Notice>> = {
  "member.invited": { what: "invited a new member", undo: "revoke the invitation in Team", view: team },
  "member.joined": { what: "joined the account", undo: "remove the member in Team", view: team },
  "member.removed": { what: "removed a member", undo: "invite them again in Team", view: team },
  "api_key.created": {
    what: "created an API key",
    undo: "revoke the API keys in Developers",
    view: () => "/developers"
  },
  "api_key.rotated": {
    what: "rotated the API key",
    undo: "revoke the API keys in Developers",
    view: () => "/developers"
  },
  "api_key.revoked": {
    what: "revoked every API key",
    undo: "issue a new key in Developers",
    view: () => "/developers"
  },
  "payout_address.created": {
    what: "added a payout address",
    undo: "disable the payout address in Payout addresses",
    view: () => "/payout-addresses"
  },
  "payout_address.hold_cancelled": {
    what: "cancelled a new payout address during its hold (it is disabled)",
    undo: "add the address again in Payout addresses",
    view: () => "/payout-addresses"
  },
  "payout_address.disabled": {
    what: "disabled a payout address",
    undo: "add the address again in Payout addresses",
    view: () => "/payout-addresses"
  },
  "passkey.added": {
    what: "added a passkey to their sign-in",
    undo: "remove the member in Team (their passkeys go with them)",
    view: team
  },
  "webhook_endpoint.created": {
    what: "added a webhook endpoint",
    undo: "disable the endpoint in Webhooks",
    view: (id) => (id === null ? "/webhooks" : `/webhooks/${id}`)
  },
  "webhook_endpoint.secret_rotated": {
    what: "rotated a webhook endpoint's secret",
    undo: "rotate the secret again in Webhooks (the previous one cannot be restored)",
    view: (id) => (id === null ? "/webhooks" : `/webhooks/${id}`)
  }
}

/** Whether an action mails the account's members. */
export const notifies = (action: AuditAction): boolean => NOTICES[action] !== undefined

/**
 * The notice's text, from the audit entry (plus the account's name, the dashboard's address and, for a new payout
 * address, when its hold ends).
 */
export const noticeMail = (
  entry: AuditEntry,
  accountName: string,
  link: (fragment: string) => string,
  heldUntil: Date | null = null
) => {
  const notice = NOTICES[entry.action]
  if (notice === undefined) return undefined
  // A new payout address in its hold: the members learn until when it can still be stopped, and how.
  const hold =
    heldUntil === null || entry.targetId === null
      ? []
      : [
          "",
          `It takes no deposit request until ${heldUntil.toISOString()}. Until then any member can cancel it: ${link(`/payout-addresses/${entry.targetId}`)} (or POST /v1/payout-addresses/${entry.targetId}/cancel).`
        ]
  const client = `${entry.client.address}${entry.client.userAgent === null ? "" : ` (${entry.client.userAgent})`}`
  return {
    subject: `Security notice for ${accountName}: ${entry.actor.label} ${notice.what}`,
    text: [
      `${entry.actor.label} ${notice.what} on ${accountName}.`,
      "",
      `What: ${entry.action}${entry.targetId === null ? "" : ` (${entry.targetId})`}`,
      `When: ${entry.at.toISOString()}`,
      `From: ${client}`,
      ...(entry.client.requestId === null ? [] : [`Request: ${entry.client.requestId}`]),
      ...hold,
      "",
      `If you did not expect this, ${notice.undo}: ${link(notice.view(entry.targetId))}`,
      "Every member of the account receives this notice."
    ].join("\n")
  }
}

/**
 * Security notices: every live member of the account is mailed about an audit entry the table above names. Sent
 * after the change committed; a mail that fails is logged and never undoes the change.
 */
export class SecurityNotices extends Effect.Service<SecurityNotices>()("deposits/SecurityNotices", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer
    const link = dashboardLink(yield* dashboardOriginSetting)

    const recipients = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, email: Schema.String, account_name: Schema.String }),
      execute: (accountId) => sql`
        select m.id, m.email, a.name as account_name from members m join accounts a on a.id = m.account_id
        where m.account_id = ${accountId} and m.removed_at is null
        order by m.created_at`
    })

    const holdOf = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, uuid: Schema.String }),
      Result: Schema.Struct({ held_until: Schema.NullOr(Schema.DateFromSelf) }),
      execute: ({ accountId, uuid }) => sql`
        select held_until from payout_addresses where id = ${uuid} and account_id = ${accountId}`
    })
    const heldUntilOf = (entry: AuditEntry) => {
      const uuid =
        entry.action === "payout_address.created" && entry.targetId !== null
          ? uuidFromId("pa", entry.targetId)
          : undefined
      return uuid === undefined
        ? Effect.succeed(null)
        : Effect.map(holdOf({ accountId: entry.accountId, uuid }), (rows) => rows[0]?.held_until ?? null)
    }

    /** Mails the entry's notice to every member; how many were mailed (0 for an action that notifies nobody). */
    const send = Effect.fn("SecurityNotices.send")(function* (entry: AuditEntry) {
      if (!notifies(entry.action)) return 0
      const members = yield* recipients(entry.accountId).pipe(Effect.orDie)
      const heldUntil = yield* heldUntilOf(entry).pipe(Effect.orDie)
      let sent = 0
      for (const member of members) {
        // Who just joined knows it: their join is news to the others only.
        if (entry.action === "member.joined" && member.id === entry.actor.id) continue
        const mail = noticeMail(entry, member.account_name, link, heldUntil)
        if (mail === undefined) continue
        yield* mailer.send({ to: member.email, ...mail }).pipe(
          Effect.tap(() => {
            sent += 1
          }),
          Effect.catchAll((error) =>
            Effect.logWarning("security notice not sent").pipe(
              Effect.annotateLogs({ action: entry.action, entry: entry.id, reason: error.message })
            )
          )
        )
      }
      return sent
    })

    /** `send` as the request path uses it: never fails, never defects outward (a failure is logged). */
    const sendQuietly = (entry: AuditEntry) =>
      send(entry).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning("security notices failed", cause).pipe(
              Effect.annotateLogs({ action: entry.action, entry: entry.id })
            ),
            0
          )
        )
      )

    return { send, sendQuietly } as const
  })
}) {}
