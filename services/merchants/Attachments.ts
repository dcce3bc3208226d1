import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Context, Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { createHash } from "node:crypto"
import { InvalidRequest, NotFound, ServiceUnavailable } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { Lease } from "../platform/Lease"
import { ObjectStore, type ObjectStoreError } from "../platform/objectStore/ObjectStore"
import { SignedLinks } from "../platform/objectStore/SignedLinks"
import { positiveInteger } from "../platform/Settings"
import { orDieOnSql } from "../platform/SqlFailure"

/** The largest PDF a merchant may declare. */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024
/** `ATTACHMENT_UPLOAD_SECONDS`: how long an upload link is valid (15 minutes). */
export const attachmentSettings = Config.all({
  attachmentUploadSeconds: positiveInteger("ATTACHMENT_UPLOAD_SECONDS", 900)
})
/** How long a payer's download link is valid. */
export const DOWNLOAD_MINUTES = 5
/** Attachments one deposit request may carry. */
export const MAX_ATTACHMENTS_PER_REQUEST = 10
/** How often pending uploads are checked (and abandoned ones expired) without anyone asking. */
export const SWEEP_INTERVAL = Duration.seconds(30)
export const PDF = "application/pdf"
/** The path of this service's download endpoint (outside `/v1`). */
export const DOWNLOAD_PATH = "/objects/download"

export type AttachmentStatus = "pending" | "uploaded" | "rejected" | "expired"

export interface AttachmentRow {
  readonly id: string
  readonly account_id: string
  readonly file_name: string
  readonly size_bytes: string
  readonly declared_sha256: string | null
  readonly sha256: string | null
  readonly status: AttachmentStatus
  readonly rejection_reason: string | null
  readonly upload_expires_at: Date
  readonly created_at: Date
  readonly updated_at: Date
}

/** Where an upload lands, and where accepted bytes are kept: a link used again can never replace checked bytes. */
const uploadKey = (id: string) => `uploads/${id}.pdf`
const storedKey = (id: string) => `attachments/${id}.pdf`

/** Why stored bytes are refused, or undefined when they are the PDF that was declared. */
export const refusalOf = (
  row: Pick<AttachmentRow, "size_bytes" | "declared_sha256">,
  object: { readonly size: number; readonly contentType: string; readonly bytes: Uint8Array | undefined }
): string | undefined => {
  if (object.bytes === undefined || object.size !== Number(row.size_bytes))
    return `The upload is ${object.size} bytes; ${row.size_bytes} were declared.`
  if (object.contentType.split(";")[0]?.trim().toLowerCase() !== PDF)
    return `The upload's content type is ${object.contentType}, not ${PDF}.`
  if (Buffer.from(object.bytes.subarray(0, 5)).toString("latin1") !== "%PDF-")
    return "The upload is not a PDF (it does not start with %PDF-)."
  if (row.declared_sha256 !== null && sha256Of(object.bytes) !== row.declared_sha256)
    return "The upload's SHA-256 is not the one declared."
  return undefined
}

const sha256Of = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const unavailable = (e: ObjectStoreError) =>
  Effect.zipRight(
    Effect.logWarning(e.message),
    Effect.fail(new ServiceUnavailable({ message: "Object storage is unavailable; try again shortly." }))
  )

/**
 * Attachments: a merchant declares a PDF (name, size, optionally its SHA-256) and gets a presigned upload; the
 * bytes go straight to object storage. An attachment is `uploaded` only once the stored object is checked (size,
 * content type, `%PDF-`, the SHA-256 when declared), and then its bytes are copied where no upload link reaches;
 * otherwise it is `rejected` with the reason, or `expired` when no upload came before the link's expiry. The
 * check runs when the embedded store receives an upload, when the merchant reads the attachment, when it is
 * attached to a request, and every SWEEP_INTERVAL for the rest.
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const store = yield* ObjectStore
  const links = yield* SignedLinks
  const settings = yield* attachmentSettings
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const findRow = (accountId: string, uuid: string) =>
    Effect.map(
      sql<AttachmentRow>`
        select * from attachments where id = ${uuid} and account_id = ${accountId} and deleted_at is null`,
      (rows) => Option.fromNullable(rows[0])
    )

  /** Decides a pending attachment from what is stored, once; returns the row as it now stands. */
  const check = (row: AttachmentRow) =>
    Effect.gen(function* () {
      if (row.status !== "pending") return row
      const at = yield* now
      const object = yield* store.read(uploadKey(row.id), Number(row.size_bytes))
      if (Option.isNone(object)) {
        if (at < row.upload_expires_at) return row
        return yield* settle(row, "expired", {
          rejection_reason: "No upload came before the upload link expired."
        })
      }
      const refusal = refusalOf(row, object.value)
      if (refusal !== undefined) {
        const decided = yield* settle(row, "rejected", { rejection_reason: refusal })
        yield* store.remove(uploadKey(row.id))
        return decided
      }
      const bytes = object.value.bytes!
      yield* store.put(storedKey(row.id), bytes, PDF)
      const decided = yield* settle(row, "uploaded", { sha256: sha256Of(bytes) })
      yield* store.remove(uploadKey(row.id))
      return decided
    })

  /** Moves a pending row to its outcome; a concurrent check that got there first wins (its row is returned). */
  const settle = (row: AttachmentRow, status: AttachmentStatus, fields: Record<string, string>) =>
    Effect.gen(function* () {
      const at = yield* now
      const rows = yield* sql<AttachmentRow>`
        update attachments set ${sql.update({ ...fields, status, updated_at: at })}
        where id = ${row.id} and status = 'pending' returning *`
      if (rows[0] !== undefined) return rows[0]
      const current = yield* sql<AttachmentRow>`select * from attachments where id = ${row.id}`
      return current[0] ?? row
    })

  const require = (accountId: string, uuid: string) =>
    Effect.gen(function* () {
      const row = yield* findRow(accountId, uuid)
      if (Option.isNone(row)) return yield* NotFound.of("attachment")
      return yield* check(row.value)
    })

  const declare = (
    accountId: string,
    input: { readonly file_name: string; readonly size_bytes: number; readonly sha256?: string | undefined }
  ) =>
    Effect.gen(function* () {
      const at = yield* now
      const expiresAt = new Date(at.getTime() + settings.attachmentUploadSeconds * 1000)
      const id = ids.next()
      const upload = yield* store.uploadTarget(uploadKey(id), {
        size: input.size_bytes,
        contentType: PDF,
        expiresAt
      })
      const rows = yield* sql<AttachmentRow>`
        insert into attachments ${sql.insert({
          id,
          account_id: accountId,
          file_name: input.file_name,
          size_bytes: String(input.size_bytes),
          declared_sha256: input.sha256?.toLowerCase() ?? null,
          status: "pending",
          upload_expires_at: expiresAt,
          created_at: at,
          updated_at: at
        })} returning *`
      return { row: rows[0]!, upload, expiresAt }
    })

  const list = (accountId: string, limit: number, startingAfter: string | undefined) =>
    Effect.gen(function* () {
      const rows = yield* sql<AttachmentRow>`
        select * from attachments where account_id = ${accountId} and deleted_at is null
        ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit + 1}`
      const page = yield* Effect.forEach(rows.slice(0, limit), check)
      return { rows: page, more: rows.length > limit }
    })

  /** Deletes the attachment and its bytes; requests that carried it no longer show it. */
  const remove = (accountId: string, uuid: string) =>
    Effect.gen(function* () {
      const at = yield* now
      const rows = yield* sql<{ id: string }>`
        update attachments set deleted_at = ${at}, updated_at = ${at}
        where id = ${uuid} and account_id = ${accountId} and deleted_at is null returning id`
      if (rows[0] === undefined) return yield* NotFound.of("attachment")
      yield* store.remove(uploadKey(uuid))
      yield* store.remove(storedKey(uuid))
    })

  const requireRequest = (accountId: string, depositRequestId: string) =>
    Effect.flatMap(
      sql`select 1 from deposit_requests where id = ${depositRequestId} and account_id = ${accountId}`,
      (rows) => (rows.length === 0 ? Effect.fail(NotFound.of("deposit_request")) : Effect.void)
    )

  const linkedRows = (depositRequestId: string) =>
    sql<AttachmentRow>`
      select a.* from deposit_request_attachments l join attachments a on a.id = l.attachment_id
      where l.deposit_request_id = ${depositRequestId} and a.deleted_at is null and a.status = 'uploaded'
      order by l.position`

  /** Sets the attachments a request carries (in this order); each must be the account's own and uploaded. */
  const attach = (accountId: string, depositRequestId: string, attachmentIds: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      yield* requireRequest(accountId, depositRequestId)
      const unique = [...new Set(attachmentIds)]
      if (unique.length > MAX_ATTACHMENTS_PER_REQUEST) {
        return yield* new InvalidRequest({
          message: `A deposit request carries at most ${MAX_ATTACHMENTS_PER_REQUEST} attachments.`,
          param: "attachment_ids"
        })
      }
      for (const id of unique) {
        const row = yield* require(accountId, id)
        if (row.status !== "uploaded") {
          return yield* new InvalidRequest({
            message: `Attachment att_${id} is ${row.status}; only an uploaded attachment can be attached.`,
            param: "attachment_ids"
          })
        }
      }
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`select 1 from deposit_requests where id = ${depositRequestId} for update`
          yield* sql`delete from deposit_request_attachments where deposit_request_id = ${depositRequestId}`
          if (unique.length > 0) {
            yield* sql`insert into deposit_request_attachments ${sql.insert(
              unique.map((attachment_id, position) => ({
                deposit_request_id: depositRequestId,
                attachment_id,
                position
              }))
            )}`
          }
        })
      )
      return yield* linkedRows(depositRequestId)
    })

  const attached = (accountId: string, depositRequestId: string) =>
    Effect.zipRight(requireRequest(accountId, depositRequestId), linkedRows(depositRequestId))

  /** What a payer sees: each attachment with a download link valid DOWNLOAD_MINUTES (a path of this service). */
  const forPayer = (depositRequestId: string) =>
    Effect.gen(function* () {
      const rows = yield* linkedRows(depositRequestId)
      const at = yield* now
      const expiresAt = new Date(Math.floor(at.getTime() / 60_000) * 60_000 + (DOWNLOAD_MINUTES + 1) * 60_000)
      return rows.map((row) => ({
        row,
        path: `${DOWNLOAD_PATH}?token=${links.sign({
          use: "download",
          key: storedKey(row.id),
          exp: Math.floor(expiresAt.getTime() / 1000),
          name: row.file_name
        })}`,
        expiresAt
      }))
    })

  /** The bytes a download link names, with the file name to give them; a refused link says why. */
  const download = (token: string) =>
    Effect.gen(function* () {
      const verified = links.verify(token, "download", Math.floor((yield* now).getTime() / 1000))
      if (Either.isLeft(verified)) return Either.left({ status: 403, message: verified.left })
      const object = yield* store.read(verified.right.key, MAX_ATTACHMENT_BYTES)
      if (Option.isNone(object) || object.value.bytes === undefined)
        return Either.left({ status: 404, message: "The attachment is gone." })
      return Either.right({
        bytes: object.value.bytes,
        fileName: String(verified.right.name ?? "attachment.pdf")
      })
    })

  /**
   * The embedded store's upload endpoint: the link must be this service's, unexpired, for this content type; the
   * body at most the declared size; and the key still free (a link used twice is refused). The bytes are checked
   * at once, so the answer says whether the attachment was accepted.
   */
  const receiveUpload = <E, R>(
    token: string,
    contentType: string | undefined,
    readBody: (limit: number) => Effect.Effect<Uint8Array | "TooLarge", E, R>
  ) =>
    Effect.gen(function* () {
      const verified = links.verify(token, "upload", Math.floor((yield* now).getTime() / 1000))
      if (Either.isLeft(verified)) return { status: 403, message: verified.left } as const
      const { key, type } = verified.right
      if (contentType?.split(";")[0]?.trim().toLowerCase() !== type)
        return {
          status: 403,
          message: `The upload must be sent with Content-Type: ${String(type)}.`
        } as const
      const id = /^uploads\/([0-9a-f-]{36})\.pdf$/.exec(key)?.[1]
      const rows =
        id === undefined ? [] : yield* sql<AttachmentRow>`select * from attachments where id = ${id}`
      const row = rows[0]
      if (row === undefined || row.status !== "pending")
        return { status: 409, message: "This upload link was used already." } as const
      const body = yield* readBody(Number(verified.right.size))
      if (body === "TooLarge")
        return {
          status: 413,
          message: `The upload is larger than the ${String(verified.right.size)} bytes declared.`
        } as const
      if (!(yield* store.put(key, body, type as string)))
        return { status: 409, message: "This upload link was used already." } as const
      const decided = yield* check(row)
      return decided.status === "uploaded"
        ? ({ status: 200, message: "Uploaded." } as const)
        : ({
            status: 422,
            message: decided.rejection_reason ?? `The attachment is ${decided.status}.`
          } as const)
    })

  /** Checks pending attachments nobody asked about, and expires abandoned ones. */
  const sweep = Effect.gen(function* () {
    const rows = yield* sql<AttachmentRow>`
      select * from attachments where status = 'pending' and deleted_at is null order by upload_expires_at limit 100`
    yield* Effect.forEach(rows, check, { discard: true })
    return rows.length
  })

  const api = <A, E, R>(effect: Effect.Effect<A, E | ObjectStoreError, R>) =>
    orDieOnSql(
      Effect.catchIf(
        effect,
        (e): e is ObjectStoreError => (e as { _tag?: string })._tag === "ObjectStoreError",
        unavailable
      )
    )

  return {
    declare: (a: string, input: Parameters<typeof declare>[1]) => api(declare(a, input)),
    get: (a: string, u: string) => api(require(a, u)),
    list: (a: string, l: number, s: string | undefined) => api(list(a, l, s)),
    remove: (a: string, u: string) => api(remove(a, u)),
    attach: (a: string, dr: string, ids: ReadonlyArray<string>) => api(attach(a, dr, ids)),
    attached: (a: string, dr: string) => api(attached(a, dr)),
    forPayer: (dr: string) => orDieOnSql(forPayer(dr)),
    download: (token: string) => api(download(token)),
    receiveUpload: <E, R>(
      token: string,
      contentType: string | undefined,
      readBody: (limit: number) => Effect.Effect<Uint8Array | "TooLarge", E, R>
    ) => api(receiveUpload(token, contentType, readBody)),
    sweep
  } as const
})

export class Attachments extends Context.Tag("deposits/Attachments")<
  Attachments,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(Attachments, make)
}

/** Pending uploads are checked, and abandoned ones expired, by one instance at a time. */
export const AttachmentSweeperLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const attachments = yield* Attachments
    const lease = yield* Lease
    const pass = attachments.sweep.pipe(
      Effect.withSpan("Attachments.sweep"),
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("attachment sweep failed", cause), 0))
    )
    yield* Effect.forkScoped(
      lease.whileHolding("attachment-sweeper", Effect.repeat(pass, Schedule.spaced(SWEEP_INTERVAL)))
    )
  })
)
