import { Config, Duration, Schema } from "effect"
import { createHash } from "node:crypto"
import { positiveInteger } from "../platform/Settings"

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

export const AttachmentStatus = Schema.Literal("pending", "uploaded", "rejected", "expired")
export type AttachmentStatus = typeof AttachmentStatus.Type

/** A row of `attachments`, as read (`size_bytes` is a bigint, which the driver gives as text). */
export const AttachmentRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  file_name: Schema.String,
  size_bytes: Schema.String,
  declared_sha256: Schema.NullOr(Schema.String),
  sha256: Schema.NullOr(Schema.String),
  status: AttachmentStatus,
  rejection_reason: Schema.NullOr(Schema.String),
  upload_expires_at: Schema.DateFromSelf,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export interface AttachmentRow extends Schema.Schema.Type<typeof AttachmentRow> {}

/** Where an upload lands, and where accepted bytes are kept: a link used again can never replace checked bytes. */
export const uploadKey = (id: string) => `uploads/${id}.pdf`
export const storedKey = (id: string) => `attachments/${id}.pdf`
/** The attachment an upload key names, if it names one. */
export const attachmentIdOfUploadKey = (key: string) => /^uploads\/([0-9a-f-]{36})\.pdf$/.exec(key)?.[1]

export const sha256Of = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

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
