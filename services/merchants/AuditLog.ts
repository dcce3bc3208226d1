import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Config, Effect, Schema } from "effect"
import { AUDIT_ACTIONS, type AuditAction } from "../domain/AuditActions"
import { Ids } from "../platform/Ids"

/**
 * What changed, as `resource.event`. The members' and keys' changes are recorded right after their service
 * commits (those services act after their commit: mail, credential cache drops); the rest in the change's own
 * transaction (infra/decisions/0076-audit-log-and-security-notices.md).
 */
export { AUDIT_ACTIONS, type AuditAction }

/** Who made a change: a member (by id, labelled by address), an API key (keys have no id: its last four), or the operator. */
export interface AuditActor {
  readonly kind: "member" | "api_key" | "operator"
  readonly id: string | null
  readonly label: string
}

/** Where the change came from, as the edge saw the request. */
export interface AuditClient {
  readonly address: string
  readonly userAgent: string | null
  readonly requestId: string | null
}

export interface AuditEntry {
  readonly id: string
  readonly accountId: string
  readonly actor: AuditActor
  readonly action: AuditAction
  readonly targetId: string | null
  readonly at: Date
  readonly client: AuditClient
}

/** `AUDIT_LOG_RETENTION_DAYS`: how long each audit entry is kept (default 400, so a year's history is always there). */
export const auditLogRetentionDays = Config.integer("AUDIT_LOG_RETENTION_DAYS").pipe(
  Config.withDefault(400),
  Config.validate({ message: "AUDIT_LOG_RETENTION_DAYS: must be 1 or more", validation: (n) => n >= 1 })
)

/** Rows one sweep statement deletes, so a sweep never holds many row locks or a long transaction. */
export const AUDIT_SWEEP_BATCH = 1000

const AuditRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  actor_kind: Schema.Literal("member", "api_key", "operator"),
  actor_id: Schema.NullOr(Schema.String),
  actor_label: Schema.String,
  action: Schema.Literal(...AUDIT_ACTIONS),
  target_id: Schema.NullOr(Schema.String),
  at: Schema.DateFromSelf,
  client: Schema.String,
  user_agent: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String)
})
type AuditRow = typeof AuditRow.Type

const toEntry = (row: AuditRow): AuditEntry => ({
  id: row.id,
  accountId: row.account_id,
  actor: { kind: row.actor_kind, id: row.actor_id, label: row.actor_label },
  action: row.action,
  targetId: row.target_id,
  at: row.at,
  client: { address: row.client, userAgent: row.user_agent, requestId: row.request_id }
})

/**
 * The account's audit log: append-only rows (a trigger refuses UPDATE, and DELETE outside the sweep), read newest
 * first a page at a time, swept after `AUDIT_LOG_RETENTION_DAYS`.
 */
export class AuditLog extends Effect.Service<AuditLog>()("deposits/AuditLog", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const days = yield* auditLogRetentionDays
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const insert = SqlSchema.void({
      Request: AuditRow,
      execute: (r) => sql`
        insert into audit_log (id, account_id, actor_kind, actor_id, actor_label, action, target_id, at, client,
                               user_agent, request_id)
        values (${r.id}, ${r.account_id}, ${r.actor_kind}, ${r.actor_id}, ${r.actor_label}, ${r.action},
                ${r.target_id}, ${r.at}, ${r.client}, ${r.user_agent}, ${r.request_id})`
    })
    const page = SqlSchema.findAll({
      Request: Schema.Struct({
        account_id: Schema.String,
        limit: Schema.Int,
        starting_after: Schema.UndefinedOr(Schema.String)
      }),
      Result: AuditRow,
      execute: (r) => sql`
        select * from audit_log where account_id = ${r.account_id}
        ${r.starting_after === undefined ? sql`` : sql`and id < ${r.starting_after}`}
        order by id desc limit ${r.limit + 1}`
    })

    const sweepBatch = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (cutoff) => sql`
        delete from audit_log where id in (
          select id from audit_log where at < ${cutoff} order by at limit ${AUDIT_SWEEP_BATCH})
        returning id`
    })

    const memberEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ email: Schema.String }),
      execute: (memberId) => sql`select email from members where id = ${memberId}`
    })
    /** How a reader knows the actor: a member's address then, the key's last four, or the operator. */
    const labelOf = (actor: Omit<AuditActor, "label">) =>
      actor.kind === "member" && actor.id !== null
        ? Effect.map(memberEmail(actor.id), (found) =>
            found._tag === "Some" ? found.value.email : "a member"
          )
        : Effect.succeed(actor.kind === "api_key" ? `API key …${actor.id ?? ""}` : "The operator's CLI")

    /** Records one change; inside a transaction, the entry commits (or not) with the change. */
    const record = Effect.fn("AuditLog.record")(function* (change: {
      readonly accountId: string
      readonly actor: Omit<AuditActor, "label">
      readonly action: AuditAction
      readonly targetId: string | null
      readonly client: AuditClient
    }) {
      const actor: AuditActor = { ...change.actor, label: yield* labelOf(change.actor) }
      const entry: AuditEntry = { ...change, actor, id: ids.next(), at: yield* now }
      yield* insert({
        id: entry.id,
        account_id: entry.accountId,
        actor_kind: entry.actor.kind,
        actor_id: entry.actor.id,
        actor_label: entry.actor.label.slice(0, 254),
        action: entry.action,
        target_id: entry.targetId,
        at: entry.at,
        client: entry.client.address.slice(0, 64),
        user_agent: entry.client.userAgent?.slice(0, 512) ?? null,
        request_id: entry.client.requestId
      })
      return entry
    }, Effect.orDie)

    /** Runs the change and records it in one transaction: neither commits without the other. */
    const recorded = <A, E, R>(
      change: Effect.Effect<A, E, R>,
      entryOf: (a: A) => Parameters<typeof record>[0]
    ) =>
      sql
        .withTransaction(
          Effect.flatMap(change, (a) => Effect.map(record(entryOf(a)), (entry) => [a, entry] as const))
        )
        .pipe(Effect.catchTag("SqlError", Effect.die))

    /** One page, newest first; `startingAfter` is the last entry id of the previous page. */
    const list = Effect.fn("AuditLog.list")(function* (
      accountId: string,
      limit: number,
      startingAfter: string | undefined
    ) {
      const rows = yield* page({ account_id: accountId, limit, starting_after: startingAfter })
      const items = rows.slice(0, limit).map(toEntry)
      return { entries: items, more: rows.length > limit }
    }, Effect.orDie)

    /**
     * Deletes entries older than the retention, `AUDIT_SWEEP_BATCH` a statement: how many it deleted (a full batch
     * means there may be more). The setting it makes is the only way past the append-only trigger.
     */
    const sweep = Effect.fn("AuditLog.sweep")(function* () {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - days * 86_400_000)
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`select set_config('deposits.audit_log_sweep', 'on', true)`
          const deleted = yield* sweepBatch(cutoff)
          return deleted.length
        })
      )
    }, Effect.orDie)

    return { record, recorded, list, sweep, days } as const
  }),
  dependencies: [Ids.Default]
}) {}
