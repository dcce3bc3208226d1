import { type Context, Either } from "effect"
import type { SignedLinks } from "../platform/objectStore/SignedLinks"
import {
  type AttachmentRow,
  attachmentIdOfUploadKey,
  DOWNLOAD_MINUTES,
  DOWNLOAD_PATH,
  storedKey
} from "./AttachmentRules"

type Links = Context.Tag.Service<typeof SignedLinks>

/** A refused link: the status the object routes answer and why. */
export interface LinkRefusal {
  readonly status: 403
  readonly message: string
}

/**
 * When the payer's download links of this minute expire: DOWNLOAD_MINUTES after the start of the next minute, so
 * reads within one minute sign the same links.
 */
export const downloadExpiryAt = (at: Date) =>
  new Date(Math.floor(at.getTime() / 60_000) * 60_000 + (DOWNLOAD_MINUTES + 1) * 60_000)

/** A download link for an uploaded attachment: a path of this service, carrying the file name to give the bytes. */
export const downloadLinkOf = (links: Links, row: AttachmentRow, expiresAt: Date) =>
  `${DOWNLOAD_PATH}?token=${links.sign({
    use: "download",
    key: storedKey(row.id),
    exp: Math.floor(expiresAt.getTime() / 1000),
    name: row.file_name
  })}`

/** The stored key and file name a download link names, or why it is refused. */
export const verifyDownloadLink = (
  links: Links,
  token: string,
  nowSeconds: number
): Either.Either<{ readonly key: string; readonly fileName: string }, LinkRefusal> => {
  const verified = links.verify(token, "download", nowSeconds)
  if (Either.isLeft(verified)) return Either.left({ status: 403, message: verified.left })
  return Either.right({ key: verified.right.key, fileName: String(verified.right.name ?? "attachment.pdf") })
}

/**
 * What an upload link allows: the key it writes, its content type, the declared size and the attachment it names.
 * The link must be this service's, unexpired, and sent with the content type it was signed for.
 */
export const verifyUploadLink = (
  links: Links,
  token: string,
  contentType: string | undefined,
  nowSeconds: number
): Either.Either<
  {
    readonly key: string
    readonly type: string
    readonly size: number
    readonly attachmentId: string | undefined
  },
  LinkRefusal
> => {
  const verified = links.verify(token, "upload", nowSeconds)
  if (Either.isLeft(verified)) return Either.left({ status: 403, message: verified.left })
  const { key, type } = verified.right
  if (contentType?.split(";")[0]?.trim().toLowerCase() !== type)
    return Either.left({
      status: 403,
      message: `The upload must be sent with Content-Type: ${String(type)}.`
    })
  return Either.right({
    key,
    type: type as string,
    size: Number(verified.right.size),
    attachmentId: attachmentIdOfUploadKey(key)
  })
}
