import { Clock, Effect, Either, Option } from "effect"
import { InvalidRequest, InvalidState, NotFound, ServiceUnavailable } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { ObjectStore, type ObjectStoreError } from "../platform/objectStore/ObjectStore"
import { SignedLinks } from "../platform/objectStore/SignedLinks"
import { orDieOnSql } from "../platform/SqlFailure"
import { downloadExpiryAt, downloadLinkOf, verifyDownloadLink, verifyUploadLink } from "./AttachmentLinks"
import { AttachmentRows } from "./AttachmentRows"
import {
  type AttachmentRow,
  attachmentSettings,
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_REQUEST,
  PDF,
  refusalOf,
  sha256Of,
  storedKey,
  uploadKey
} from "./AttachmentRules"

export * from "./AttachmentRules"

const unavailable = (e: ObjectStoreError) =>
  Effect.zipRight(
    Effect.logWarning(e.message),
    Effect.fail(new ServiceUnavailable({ message: "Object storage is unavailable; try again shortly." }))
  )

/** Object storage failures are a 503 and database failures a defect, for every method. */
const api = <A, E, R>(effect: Effect.Effect<A, E | ObjectStoreError, R>) =>
  orDieOnSql(
    Effect.catchIf(
      effect,
      (e): e is ObjectStoreError => (e as { _tag?: string })._tag === "ObjectStoreError",
      unavailable
    )
  )

/**
 * Attachments: a merchant declares a PDF (name, size, optionally its SHA-256) and gets a presigned upload; the
 * bytes go straight to object storage. An attachment is `uploaded` only once the stored object is checked (size,
 * content type, `%PDF-`, the SHA-256 when declared), and then its bytes are copied where no upload link reaches;
 * otherwise it is `rejected` with the reason, or `expired` when no upload came before the link's expiry. The
 * check runs when the embedded store receives an upload, when the merchant reads the attachment, when it is
 * attached to a request, and every SWEEP_INTERVAL for the rest (AttachmentSweeper).
 */
export class Attachments extends Effect.Service<Attachments>()("deposits/Attachments", {
  effect: Effect.gen(function* () {
    const rows = yield* AttachmentRows
    const ids = yield* Ids
    const store = yield* ObjectStore
    const links = yield* SignedLinks
    const settings = yield* attachmentSettings
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const nowSeconds = Effect.map(now, (at) => Math.floor(at.getTime() / 1000))

    /** Decides a pending attachment from what is stored, once; returns the row as it now stands. */
    const check = (row: AttachmentRow) =>
      Effect.gen(function* () {
        if (row.status !== "pending") return row
        const at = yield* now
        const object = yield* store.read(uploadKey(row.id), Number(row.size_bytes))
        if (Option.isNone(object)) {
          // Another check (the sweep's, or a read at the same time) may have decided it and removed the upload since
          // this row was read: a decision is committed before its upload is removed.
          const current = Option.getOrElse(yield* rows.byId(row.id), () => row)
          if (current.status !== "pending") return current
          if (at < row.upload_expires_at) return row
          return yield* rows.settle(row, "expired", {
            rejection_reason: "No upload came before the upload link expired."
          })
        }
        const refusal = refusalOf(row, object.value)
        if (refusal !== undefined) {
          const decided = yield* rows.settle(row, "rejected", { rejection_reason: refusal })
          yield* store.remove(uploadKey(row.id))
          return decided
        }
        const bytes = object.value.bytes!
        yield* store.put(storedKey(row.id), bytes, PDF)
        const decided = yield* rows.settle(row, "uploaded", { sha256: sha256Of(bytes) })
        yield* store.remove(uploadKey(row.id))
        return decided
      })

    const require = (accountId: string, uuid: string) =>
      Effect.gen(function* () {
        const row = yield* rows.find(accountId, uuid)
        if (Option.isNone(row)) return yield* NotFound.of("attachment")
        return yield* check(row.value)
      })

    const requireRequest = (accountId: string, depositRequestId: string) =>
      Effect.flatMap(rows.requestExists(accountId, depositRequestId), (exists) =>
        exists ? Effect.void : Effect.fail(NotFound.of("deposit_request"))
      )

    const declare = Effect.fn("Attachments.declare")(function* (
      accountId: string,
      input: { readonly file_name: string; readonly size_bytes: number; readonly sha256?: string | undefined }
    ) {
      const at = yield* now
      const expiresAt = new Date(at.getTime() + settings.attachmentUploadSeconds * 1000)
      const id = ids.next()
      const upload = yield* store.uploadTarget(uploadKey(id), {
        size: input.size_bytes,
        contentType: PDF,
        expiresAt
      })
      const row = yield* rows.insert({
        id,
        account_id: accountId,
        file_name: input.file_name,
        size_bytes: String(input.size_bytes),
        declared_sha256: input.sha256?.toLowerCase() ?? null,
        status: "pending",
        upload_expires_at: expiresAt,
        created_at: at,
        updated_at: at
      })
      return { row, upload, expiresAt }
    }, api)

    const get = Effect.fn("Attachments.get")(
      (accountId: string, uuid: string) => require(accountId, uuid),
      api
    )

    const list = Effect.fn("Attachments.list")(function* (
      accountId: string,
      limit: number,
      startingAfter: string | undefined
    ) {
      const page = yield* rows.page(accountId, limit, startingAfter)
      return { rows: yield* Effect.forEach(page.rows, check), more: page.more }
    }, api)

    /** Deletes the attachment and its bytes; requests that carried it no longer show it. */
    const remove = Effect.fn("Attachments.remove")(function* (accountId: string, uuid: string) {
      if (!(yield* rows.softDelete(accountId, uuid))) return yield* NotFound.of("attachment")
      yield* store.remove(uploadKey(uuid))
      yield* store.remove(storedKey(uuid))
    }, api)

    /** Sets the attachments a request carries (in this order); each must be the account's own and uploaded. */
    const attach = Effect.fn("Attachments.attach")(function* (
      accountId: string,
      depositRequestId: string,
      attachmentIds: ReadonlyArray<string>
    ) {
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
          return yield* new InvalidState({
            message: `Attachment att_${id} is ${row.status}; only an uploaded attachment can be attached.`
          })
        }
      }
      yield* rows.replaceLinks(depositRequestId, unique)
      return yield* rows.linked(depositRequestId)
    }, api)

    const attached = Effect.fn("Attachments.attached")(
      (accountId: string, depositRequestId: string) =>
        Effect.zipRight(requireRequest(accountId, depositRequestId), rows.linked(depositRequestId)),
      api
    )

    /** What a payer sees: each attachment with a download link valid DOWNLOAD_MINUTES (a path of this service). */
    const forPayer = Effect.fn("Attachments.forPayer")(function* (depositRequestId: string) {
      const linked = yield* rows.linked(depositRequestId)
      const expiresAt = downloadExpiryAt(yield* now)
      return linked.map((row) => ({ row, path: downloadLinkOf(links, row, expiresAt), expiresAt }))
    }, orDieOnSql)

    /**
     * A download link for the merchant's own attachment (the dashboard's Download): the same short-lived link a
     * payer gets, for an uploaded attachment only (a pending, rejected or expired one has no bytes to give).
     */
    const downloadLink = Effect.fn("Attachments.downloadLink")(function* (accountId: string, uuid: string) {
      const row = yield* require(accountId, uuid)
      if (row.status !== "uploaded")
        return yield* new InvalidState({
          message: `The attachment is ${row.status}: only an uploaded attachment can be downloaded.`
        })
      const expiresAt = downloadExpiryAt(yield* now)
      return { path: downloadLinkOf(links, row, expiresAt), expiresAt }
    }, api)

    /** The bytes a download link names, with the file name to give them; a refused link says why. */
    const download = Effect.fn("Attachments.download")(function* (token: string) {
      const verified = verifyDownloadLink(links, token, yield* nowSeconds)
      if (Either.isLeft(verified)) return Either.left(verified.left)
      const object = yield* store.read(verified.right.key, MAX_ATTACHMENT_BYTES)
      if (Option.isNone(object) || object.value.bytes === undefined)
        return Either.left({ status: 404, message: "The attachment is gone." })
      return Either.right({ bytes: object.value.bytes, fileName: verified.right.fileName })
    }, api)

    /**
     * The embedded store's upload endpoint: the link must be this service's, unexpired, for this content type; the
     * body at most the declared size; and the key still free (a link used twice is refused). The bytes are checked
     * at once, so the answer says whether the attachment was accepted.
     */
    const receive = <E, R>(
      token: string,
      contentType: string | undefined,
      readBody: (limit: number) => Effect.Effect<Uint8Array | "TooLarge", E, R>
    ) =>
      Effect.gen(function* () {
        const verified = verifyUploadLink(links, token, contentType, yield* nowSeconds)
        if (Either.isLeft(verified)) return verified.left
        const { key, type, size, attachmentId } = verified.right
        const row = attachmentId === undefined ? Option.none() : yield* rows.byId(attachmentId)
        if (Option.isNone(row) || row.value.status !== "pending")
          return { status: 409, message: "This upload link was used already." } as const
        const body = yield* readBody(size)
        if (body === "TooLarge")
          return { status: 413, message: `The upload is larger than the ${size} bytes declared.` } as const
        if (!(yield* store.put(key, body, type)))
          return { status: 409, message: "This upload link was used already." } as const
        const decided = yield* check(row.value)
        return decided.status === "uploaded"
          ? ({ status: 200, message: "Uploaded." } as const)
          : ({
              status: 422,
              message: decided.rejection_reason ?? `The attachment is ${decided.status}.`
            } as const)
      })

    /** Checks pending attachments nobody asked about, and expires abandoned ones; how many it looked at. */
    const sweep = Effect.gen(function* () {
      const pending = yield* rows.pending()
      yield* Effect.forEach(pending, check, { discard: true })
      return pending.length
    })

    return {
      declare,
      get,
      list,
      remove,
      attach,
      attached,
      forPayer,
      downloadLink,
      download,
      // Generic over the body reader, which Effect.fn would erase: the span is added by hand instead.
      receiveUpload: <E, R>(
        token: string,
        contentType: string | undefined,
        readBody: (limit: number) => Effect.Effect<Uint8Array | "TooLarge", E, R>
      ) => api(receive(token, contentType, readBody)).pipe(Effect.withSpan("Attachments.receiveUpload")),
      sweep
    } as const
  }),
  dependencies: [AttachmentRows.Default, Ids.Default, SignedLinks.Default]
}) {}
