import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_REQUEST
} from "../../../services/merchants/AttachmentRules"
import { Id } from "../../../services/domain/PrefixedId"
import { Text } from "../../../services/domain/Text"
import { Authentication } from "../Security"
import {
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable,
  Unauthenticated
} from "../Errors"
import { exampleId, IdParam, Limit, ListOf, StrictStruct, withExample } from "../Schemas"

const Timestamp = Schema.String.annotations({ description: "RFC 3339 UTC, second precision, Z." })

export const Upload = Schema.Struct({
  url: Schema.String.annotations({ description: "Send the PDF's bytes here, exactly as declared." }),
  method: Schema.Literal("PUT"),
  headers: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "Headers to send with the bytes (they are part of the signature)."
  }),
  expires_at: Timestamp,
  expires_in_minutes: Schema.Number
}).annotations({
  identifier: "AttachmentUpload",
  description: "A presigned upload: the bytes go straight to object storage, never through the API."
})

export const Attachment = Schema.Struct({
  id: Schema.String,
  file_name: Schema.String,
  size_bytes: Schema.Number,
  content_type: Schema.Literal("application/pdf"),
  sha256: Schema.NullOr(Schema.String).annotations({
    description: "The SHA-256 of the checked bytes once uploaded (or the declared one before)."
  }),
  status: Schema.Literal("pending", "uploaded", "rejected", "expired").annotations({
    description:
      "`pending` until the stored object is checked; `uploaded` once it is the PDF declared; `rejected` (see `rejection_reason`) or `expired` (no upload before the link expired) otherwise."
  }),
  rejection_reason: Schema.NullOr(Schema.String),
  upload: Schema.NullOr(Upload).annotations({ description: "Only in the create response." }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({
  identifier: "Attachment",
  description: "A PDF a merchant shows payers with a deposit request."
})

export const AttachmentDownloadLink = Schema.Struct({
  download_url: Schema.String.annotations({
    description: "An absolute URL of this service; GET it for the PDF."
  }),
  expires_at: Timestamp
}).annotations({ identifier: "AttachmentDownloadLink" })

const Sha256 = Schema.String.pipe(
  Schema.pattern(/^[0-9a-fA-F]{64}$/, { message: () => "must be 64 hexadecimal digits" })
)

export const CreateAttachment = withExample(
  StrictStruct({
    file_name: Text.pipe(
      Schema.minLength(1),
      Schema.maxLength(255),
      Schema.filter((s) => !/[\\/]/.test(s) || "must be a file name, without / or \\", {
        jsonSchema: { pattern: "^[^\\\\/]*$" }
      })
    ),
    // Not `Schema.Int`: its named schema would carry the bounds beside a `$ref`, where they have no type.
    size_bytes: Schema.Number.pipe(Schema.int(), Schema.between(1, MAX_ATTACHMENT_BYTES)).annotations({
      description: `The PDF's size in bytes, 1 to ${MAX_ATTACHMENT_BYTES} (10 MiB).`
    }),
    sha256: Schema.optional(Sha256)
  }).annotations({ identifier: "CreateAttachment" }),
  { file_name: "invoice-4711.pdf", size_bytes: 48213 }
)

export const SetAttachments = withExample(
  StrictStruct({
    attachment_ids: Schema.Array(Id("att")).pipe(Schema.maxItems(MAX_ATTACHMENTS_PER_REQUEST))
  }).annotations({ identifier: "SetAttachments" }),
  { attachment_ids: [exampleId("att")] }
)

export const AttachmentList = Schema.Struct({ attachments: Schema.Array(Attachment) })

export class AttachmentsApi extends HttpApiGroup.make("attachments")
  .add(
    HttpApiEndpoint.post("create", "/attachments")
      .setPayload(CreateAttachment)
      .addSuccess(Attachment, { status: 201 })
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Declare a PDF and get a presigned upload for it")
  )
  .add(
    HttpApiEndpoint.get("list", "/attachments")
      .setUrlParams(Schema.Struct({ limit: Limit, starting_after: Schema.optional(Id("att")) }))
      .addSuccess(ListOf("attachments", Attachment))
      .annotate(OpenApi.Summary, "List attachments, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/attachments/:id")
      .setPath(Schema.Struct({ id: IdParam("att") }))
      .addSuccess(Attachment)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Read an attachment (a pending one is checked against what was stored)")
  )
  .add(
    HttpApiEndpoint.get("downloadLink", "/attachments/:id/download-link")
      .setPath(Schema.Struct({ id: IdParam("att") }))
      .addSuccess(AttachmentDownloadLink)
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(OpenApi.Summary, "A short-lived link to download an uploaded attachment")
      .annotate(
        OpenApi.Description,
        "The same link a payer's checkout gets, valid for minutes: it names the attachment in a signature, so opening it needs no credential. `409 invalid_state` while the attachment is not `uploaded`."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/attachments/:id")
      .setPath(Schema.Struct({ id: IdParam("att") }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Delete an attachment and its bytes (requests stop showing it)")
  )
  .add(
    HttpApiEndpoint.put("setForRequest", "/deposit-requests/:id/attachments")
      .setPath(Schema.Struct({ id: IdParam("dr") }))
      .setPayload(SetAttachments)
      .addSuccess(AttachmentList)
      .addError(NotFound)
      .addError(InvalidState)
      .addError(PayloadTooLarge)
      .annotate(
        OpenApi.Summary,
        `Set the attachments a deposit request shows its payer, in order (uploaded ones, at most ${MAX_ATTACHMENTS_PER_REQUEST})`
      )
  )
  .add(
    HttpApiEndpoint.get("listForRequest", "/deposit-requests/:id/attachments")
      .setPath(Schema.Struct({ id: IdParam("dr") }))
      .addSuccess(AttachmentList)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The attachments a deposit request shows its payer")
  )
  .addError(Unauthenticated)
  .addError(RateLimited)
  .addError(InvalidRequest)
  .addError(ServiceUnavailable)
  .middleware(Authentication) {}
