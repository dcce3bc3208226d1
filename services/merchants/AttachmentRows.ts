import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option, Schema } from "effect"
import { AttachmentRow, type AttachmentStatus } from "./AttachmentRules"
import { orDieOnStorage } from "../platform/SqlFailure"

const Owned = Schema.Struct({ accountId: Schema.String, uuid: Schema.String })
const NewAttachment = AttachmentRow.pipe(Schema.omit("sha256", "rejection_reason"))
const Changes = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Link = Schema.Struct({
  deposit_request_id: Schema.String,
  attachment_id: Schema.String,
  position: Schema.Number
})

/** The attachment rows and the links from deposit requests to them; every merchant query takes the account first. */
export class AttachmentRows extends Effect.Service<AttachmentRows>()("deposits/AttachmentRows", {
  effect: Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const ownedRow = SqlSchema.findOne({
      Request: Owned,
      Result: AttachmentRow,
      execute: ({ accountId, uuid }) => sql`
        select * from attachments where id = ${uuid} and account_id = ${accountId} and deleted_at is null`
    })
    const rowById = SqlSchema.findOne({
      Request: Schema.String,
      Result: AttachmentRow,
      execute: (uuid) => sql`select * from attachments where id = ${uuid}`
    })
    const insertRow = SqlSchema.single({
      Request: NewAttachment,
      Result: AttachmentRow,
      execute: (row) => sql`insert into attachments ${sql.insert(row)} returning *`
    })
    const settlePending = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, changes: Changes }),
      Result: AttachmentRow,
      execute: ({ id, changes }) => sql`
        update attachments set ${sql.update(changes)}
        where id = ${id} and status = 'pending' returning *`
    })
    const pageRows = SqlSchema.findAll({
      Request: Schema.Struct({
        accountId: Schema.String,
        limit: Schema.Number,
        startingAfter: Schema.UndefinedOr(Schema.String)
      }),
      Result: AttachmentRow,
      execute: ({ accountId, limit, startingAfter }) => sql`
        select * from attachments where account_id = ${accountId} and deleted_at is null
        ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit}`
    })
    const markDeleted = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, uuid: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ accountId, uuid, at }) => sql`
        update attachments set deleted_at = ${at}, updated_at = ${at}
        where id = ${uuid} and account_id = ${accountId} and deleted_at is null returning id`
    })
    const linkedRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: AttachmentRow,
      execute: (depositRequestId) => sql`
        select a.* from deposit_request_attachments l join attachments a on a.id = l.attachment_id
        where l.deposit_request_id = ${depositRequestId} and a.deleted_at is null and a.status = 'uploaded'
        order by l.position`
    })
    const insertLinks = SqlSchema.void({
      Request: Schema.Array(Link),
      execute: (links) => sql`insert into deposit_request_attachments ${sql.insert(links)}`
    })
    const pendingRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: AttachmentRow,
      execute: () => sql`
        select * from attachments where status = 'pending' and deleted_at is null order by upload_expires_at limit 100`
    })

    const find = Effect.fn("AttachmentRows.find")(function* (accountId: string, uuid: string) {
      return yield* ownedRow({ accountId, uuid })
    }, orDieOnStorage)

    /** Any account's row, deleted or not: for a link that already names it. */
    const byId = Effect.fn("AttachmentRows.byId")(function* (uuid: string) {
      return yield* rowById(uuid)
    }, orDieOnStorage)

    const insert = Effect.fn("AttachmentRows.insert")(function* (
      row: Omit<AttachmentRow, "sha256" | "rejection_reason">
    ) {
      return yield* insertRow(row)
    }, orDieOnStorage)

    /** Moves a pending row to its outcome; a concurrent check that got there first wins (its row is returned). */
    const settle = Effect.fn("AttachmentRows.settle")(function* (
      row: AttachmentRow,
      status: AttachmentStatus,
      fields: Record<string, string>
    ) {
      const at = yield* now
      const settled = yield* settlePending({ id: row.id, changes: { ...fields, status, updated_at: at } })
      if (Option.isSome(settled)) return settled.value
      return Option.getOrElse(yield* rowById(row.id), () => row)
    }, orDieOnStorage)

    /** One page of the account's attachments, newest first, and whether more follow. */
    const page = Effect.fn("AttachmentRows.page")(function* (
      accountId: string,
      limit: number,
      startingAfter: string | undefined
    ) {
      const rows = yield* pageRows({ accountId, limit: limit + 1, startingAfter })
      return { rows: rows.slice(0, limit), more: rows.length > limit }
    }, orDieOnStorage)

    /** Marks the attachment deleted; false when the account has no such attachment. */
    const softDelete = Effect.fn("AttachmentRows.softDelete")(function* (accountId: string, uuid: string) {
      return Option.isSome(yield* markDeleted({ accountId, uuid, at: yield* now }))
    }, orDieOnStorage)

    const requestExists = Effect.fn("AttachmentRows.requestExists")(function* (
      accountId: string,
      depositRequestId: string
    ) {
      const rows =
        yield* sql`select 1 from deposit_requests where id = ${depositRequestId} and account_id = ${accountId}`
      return rows.length > 0
    }, orDieOnStorage)

    /** The uploaded, undeleted attachments a request carries, in its order. */
    const linked = Effect.fn("AttachmentRows.linked")(function* (depositRequestId: string) {
      return yield* linkedRows(depositRequestId)
    }, orDieOnStorage)

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
            yield* insertLinks(
              attachmentIds.map((attachment_id, position) => ({
                deposit_request_id: depositRequestId,
                attachment_id,
                position
              }))
            )
          }
        })
      )
    }, orDieOnStorage)

    /** Pending uploads nobody asked about, oldest deadline first. */
    const pending = Effect.fn("AttachmentRows.pending")(function* () {
      return yield* pendingRows(undefined)
    }, orDieOnStorage)

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
