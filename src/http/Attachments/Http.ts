import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type AttachmentRow, Attachments } from "../../../services/merchants/Attachments"
import { toId, uuidFromId } from "../../../services/domain/PrefixedId"
import { formatTimestamp } from "../../../services/domain/Timestamp"
import type { UploadTarget } from "../../../services/platform/objectStore/ObjectStore"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"
import { PublicUrl } from "../../../services/platform/PublicUrl"
import { NotFound } from "../Errors"

export const attachmentWire = (
  row: AttachmentRow,
  upload: { target: UploadTarget; expiresAt: Date } | null,
  absolute: (url: string) => string
) => ({
  id: toId("att", row.id) as string,
  file_name: row.file_name,
  size_bytes: Number(row.size_bytes),
  content_type: "application/pdf" as const,
  sha256: row.sha256 ?? row.declared_sha256,
  status: row.status,
  rejection_reason: row.rejection_reason,
  upload:
    upload === null
      ? null
      : {
          url: absolute(upload.target.url),
          method: upload.target.method,
          headers: { ...upload.target.headers },
          expires_at: formatTimestamp(upload.expiresAt),
          expires_in_minutes: Math.ceil((upload.expiresAt.getTime() - row.created_at.getTime()) / 60_000)
        },
  created_at: formatTimestamp(row.created_at),
  updated_at: formatTimestamp(row.updated_at)
})

const uuidOr404 = (prefix: "att" | "dr", id: string) => {
  const uuid = uuidFromId(prefix, id)
  return uuid === undefined
    ? Effect.fail(NotFound.of(prefix === "att" ? "attachment" : "deposit_request"))
    : Effect.succeed(uuid)
}

export const AttachmentsLive = HttpApiBuilder.group(Api, "attachments", (handlers) =>
  Effect.gen(function* () {
    const attachments = yield* Attachments
    const { absolute } = yield* PublicUrl
    const wire = (row: AttachmentRow) => attachmentWire(row, null, absolute)
    const withAccount = <A, E, R>(f: (accountId: string) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(CurrentIdentity, ({ accountId }) => f(accountId))
    return handlers
      .handle("create", ({ payload }) =>
        withAccount((a) =>
          Effect.map(attachments.declare(a, payload), ({ row, upload, expiresAt }) =>
            attachmentWire(row, { target: upload, expiresAt }, absolute)
          )
        )
      )
      .handle("downloadLink", ({ path }) =>
        withAccount((a) =>
          Effect.flatMap(uuidOr404("att", path.id), (uuid) =>
            Effect.map(attachments.downloadLink(a, uuid), ({ path: link, expiresAt }) => ({
              download_url: absolute(link),
              expires_at: formatTimestamp(expiresAt)
            }))
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        withAccount((a) =>
          Effect.map(
            attachments.list(
              a,
              urlParams.limit,
              urlParams.starting_after && uuidFromId("att", urlParams.starting_after)
            ),
            ({ rows, more }) => ({
              attachments: rows.map(wire),
              next_cursor: more && rows.length > 0 ? (toId("att", rows[rows.length - 1]!.id) as string) : null
            })
          )
        )
      )
      .handle("get", ({ path }) =>
        withAccount((a) =>
          Effect.flatMap(uuidOr404("att", path.id), (u) => Effect.map(attachments.get(a, u), wire))
        )
      )
      .handle("delete", ({ path }) =>
        withAccount((a) => Effect.flatMap(uuidOr404("att", path.id), (u) => attachments.remove(a, u)))
      )
      .handle("setForRequest", ({ path, payload }) =>
        withAccount((a) =>
          Effect.flatMap(uuidOr404("dr", path.id), (dr) =>
            Effect.map(
              attachments.attach(
                a,
                dr,
                payload.attachment_ids.map((id) => uuidFromId("att", id)!)
              ),
              (rows) => ({ attachments: rows.map(wire) })
            )
          )
        )
      )
      .handle("listForRequest", ({ path }) =>
        withAccount((a) =>
          Effect.flatMap(uuidOr404("dr", path.id), (dr) =>
            Effect.map(attachments.attached(a, dr), (rows) => ({ attachments: rows.map(wire) }))
          )
        )
      )
  })
)
