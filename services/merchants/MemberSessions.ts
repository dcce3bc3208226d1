import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { NotFound } from "../domain/Errors"
import { CredentialCache } from "./CredentialCache"
import { orDieOnStorage } from "../platform/SqlFailure"

export interface SessionInfo {
  readonly id: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly userAgent: string | null
  readonly current: boolean
}

const SessionRow = Schema.Struct({
  id: Schema.String,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  user_agent: Schema.NullOr(Schema.String)
})

/** A member's own dashboard sessions (`Members.listSessions`, `endSession`); anyone else's are not found. */
export const makeMemberSessions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* CredentialCache
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const liveSessions = SqlSchema.findAll({
    Request: Schema.Struct({ accountId: Schema.String, memberId: Schema.String, at: Schema.DateFromSelf }),
    Result: SessionRow,
    execute: ({ accountId, memberId, at }) => sql`
      select id, created_at, expires_at, user_agent from dashboard_sessions
      where account_id = ${accountId} and member_id = ${memberId} and revoked_at is null
        and expires_at > ${at}
      order by created_at desc limit 100`
  })
  const revokeOwn = SqlSchema.findOne({
    Request: Schema.Struct({
      accountId: Schema.String,
      memberId: Schema.String,
      sessionId: Schema.String,
      at: Schema.DateFromSelf
    }),
    Result: Schema.Struct({ id: Schema.String }),
    execute: ({ accountId, memberId, sessionId, at }) => sql`
      update dashboard_sessions set revoked_at = ${at}
      where id = ${sessionId} and account_id = ${accountId} and member_id = ${memberId} and revoked_at is null
      returning id`
  })

  /** The member's live sessions, the calling one marked. */
  const listSessions = Effect.fn("Members.listSessions")(function* (
    accountId: string,
    memberId: string,
    currentSessionId: string | null
  ) {
    const rows = yield* liveSessions({ accountId, memberId, at: yield* now })
    return rows.map(
      (row): SessionInfo => ({
        id: row.id,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        userAgent: row.user_agent,
        current: row.id === currentSessionId
      })
    )
  }, orDieOnStorage)

  /** Ends one of the member's own live sessions; anyone else's is not found. */
  const endSession = Effect.fn("Members.endSession")(function* (
    accountId: string,
    memberId: string,
    sessionId: string
  ) {
    const ended = yield* revokeOwn({ accountId, memberId, sessionId, at: yield* now })
    if (Option.isNone(ended)) return yield* NotFound.of("session")
    yield* cache.changed(accountId)
  }, orDieOnStorage)

  return { listSessions, endSession } as const
})
