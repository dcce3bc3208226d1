import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import type { AttachmentRow, AttachmentStatus } from "./AttachmentRules"

/** The attachment rows and the links from deposit requests to them; every merchant query takes the account first. */
export class AttachmentRows extends Effect.Service<AttachmentRows>()("deposits/AttachmentRows", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const find = Effect.fn("AttachmentRows.find")(function* (accountId: string, uuid: string) {
      const rows = yield* sql<AttachmentRow>`
        select * from attachments where id = ${uuid} and account_id = ${accountId} and deleted_at is null`
      return Option.fromNullable(rows[0])
    })

    /** Any account's row, deleted or not: for a link that already names it. */
    const byId = Effect.fn("AttachmentRows.byId")(function* (uuid: string) {
      const rows = yield* sql<AttachmentRow>`select * from attachments where id = ${uuid}`
      return Option.fromNullable(rows[0])
    })

    const insert = Effect.fn("AttachmentRows.insert")(function* (
      row: Omit<AttachmentRow, "sha256" | "rejection_reason">
    ) {
      const rows = yield* sql<AttachmentRow>`insert into attachments ${sql.insert(row)} returning *`
      return rows[0]!
    })

    /** Moves a pending row to its outcome; a concurrent check that got there first wins (its row is returned). */
    const settle = Effect.fn("AttachmentRows.settle")(function* (
      row: AttachmentRow,
      status: AttachmentStatus,
      fields: Record<string, string>
    ) {
      const at = yield* now
      const rows = yield* sql<AttachmentRow>`
        update attachments set ${sql.update({ ...fields, status, updated_at: at })}
        where id = ${row.id} and status = 'pending' returning *`
      if (rows[0] !== undefined) return rows[0]
      const current = yield* sql<AttachmentRow>`select * from attachments where id = ${row.id}`
      return current[0] ?? row
    })

    /** One page of the account's attachments, newest first, and whether more follow. */
    const page = Effect.fn("AttachmentRows.page")(function* (
      accountId: string,
      limit: number,
      startingAfter: string | undefined
    ) {
      const rows = yield* sql<AttachmentRow>`
        select * from attachments where account_id = ${accountId} and deleted_at is null
        ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit + 1}`
      return { rows: rows.slice(0, limit), more: rows.length > limit }
    })

    /** Marks the attachment deleted; false when the account has no such attachment. */
    const softDelete = Effect.fn("AttachmentRows.softDelete")(function* (accountId: string, uuid: string) {
      const at = yield* now
      const rows = yield* sql<{ id: string }>`
        update attachments set deleted_at = ${at}, updated_at = ${at}
        where id = ${uuid} and account_id = ${accountId} and deleted_at is null returning id`
      return rows[0] !== undefined
    })

    const requestExists = Effect.fn("AttachmentRows.requestExists")(function* (
      accountId: string,
      depositRequestId: string
    ) {
      const rows =
        yield* sql`select 1 from deposit_requests where id = ${depositRequestId} and account_id = ${accountId}`
      return rows.length > 0
    })

    /** The uploaded, undeleted attachments a request carries, in its order. */
    const linked = Effect.fn("AttachmentRows.linked")(function* (depositRequestId: string) {
      return yield* sql<AttachmentRow>`
        select a.* from deposit_request_attachments l join attachments a on a.id = l.attachment_id
        where l.deposit_request_id = ${depositRequestId} and a.deleted_at is null and a.status = 'uploaded'
        order by l.position`
    })

    /** Replaces the attachments a request carries, under the request's row lock. */
    const replaceLinks = Effect.fn("AttachmentRows.replaceLinks")(function* (
      depositRequestId: string,
      attachmentIds: ReadonlyArray<string>
    ) {
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`select 1 from deposit_requests where id = ${depositRequestId} for update`
          yield* sql`delete from deposit_request_attachments where deposit_request_id = ${depositRequestId}`
          if (attachmentIds.length > 0) {
            yield* sql`insert into deposit_request_attachments ${sql.insert(
              attachmentIds.map((attachment_id, position) => ({
                deposit_request_id: depositRequestId,
                attachment_id,
                position
              }))
            )}`
          }
        })
      )
    })

    /** Pending uploads nobody asked about, oldest deadline first. */
    const pending = Effect.fn("AttachmentRows.pending")(function* () {
      return yield* sql<AttachmentRow>`
        select * from attachments where status = 'pending' and deleted_at is null order by upload_expires_at limit 100`
    })

    return {
      find,
      byId,
      insert,
      settle,
      page,
      softDelete,
      requestExists,
      linked,
      replaceLinks,
      pending
    } as const
  })
}) {}
