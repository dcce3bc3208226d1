import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException
} from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { Effect, Option } from "effect"
import { ObjectStoreError, type ObjectStoreShape } from "./Contract"

const statusOf = (e: unknown) => (e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined)

/** A call's answer, or none when the server says the object is not there. */
const absentOn404 = <A>(effect: Effect.Effect<A, ObjectStoreError>) =>
  effect.pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (e) => statusOf(e.cause) === 404,
      () => Effect.succeed(Option.none<A>())
    )
  )

/**
 * An S3-compatible store through the AWS SDK v3 (AWS S3, Cloudflare R2, MinIO): uploads are presigned `PUT`s for
 * one key, content type and length, with `If-None-Match: *` signed in, so the store itself refuses an upload over
 * an object that exists (a link used twice).
 */
export const makeS3ObjectStore = (o: {
  readonly bucket: string
  readonly endpoint: string | undefined
  readonly region: string
  readonly forcePathStyle: boolean
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined
}): ObjectStoreShape => {
  const client = new S3Client({
    region: o.region,
    forcePathStyle: o.forcePathStyle,
    ...(o.endpoint === undefined ? {} : { endpoint: o.endpoint }),
    ...(o.credentials === undefined ? {} : { credentials: o.credentials }),
    // Checksums only when an operation requires one: presigned uploads are sent by other clients.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED"
  })
  const call = <A>(operation: string, f: () => Promise<A>) =>
    Effect.tryPromise({ try: f, catch: (cause) => new ObjectStoreError({ operation, cause }) })

  return {
    kind: "s3",
    uploadTarget: (key, u) =>
      call("presign", () =>
        getSignedUrl(
          client,
          new PutObjectCommand({
            Bucket: o.bucket,
            Key: key,
            ContentType: u.contentType,
            ContentLength: u.size,
            IfNoneMatch: "*"
          }),
          {
            expiresIn: Math.max(1, Math.floor((u.expiresAt.getTime() - Date.now()) / 1000)),
            signableHeaders: new Set(["content-type", "content-length", "if-none-match"])
          }
        )
      ).pipe(
        Effect.map((url) => ({
          url,
          method: "PUT" as const,
          headers: { "content-type": u.contentType, "if-none-match": "*" }
        }))
      ),
    read: (key, maxBytes) =>
      Effect.gen(function* () {
        const head = yield* absentOn404(
          call("head", () => client.send(new HeadObjectCommand({ Bucket: o.bucket, Key: key })))
        )
        if (Option.isNone(head)) return Option.none()
        const size = Number(head.value.ContentLength ?? 0)
        const contentType = head.value.ContentType ?? "application/octet-stream"
        if (size > maxBytes) return Option.some({ size, contentType, bytes: undefined })
        // Removed between the two calls (another reader decided it): as absent as if the head had missed it.
        const object = yield* absentOn404(
          call("get", () => client.send(new GetObjectCommand({ Bucket: o.bucket, Key: key })))
        )
        if (Option.isNone(object)) return Option.none()
        const body = object.value.Body
        const bytes = yield* call("get", async () => body?.transformToByteArray() ?? new Uint8Array())
        return Option.some({ size: bytes.length, contentType, bytes })
      }),
    put: (key, bytes, contentType) =>
      call("put", () =>
        client.send(
          new PutObjectCommand({
            Bucket: o.bucket,
            Key: key,
            Body: bytes,
            ContentType: contentType,
            IfNoneMatch: "*"
          })
        )
      ).pipe(
        Effect.as(true),
        Effect.catchIf(
          (e) => statusOf(e.cause) === 412,
          () => Effect.succeed(false)
        )
      ),
    remove: (key) =>
      Effect.asVoid(
        call("remove", () => client.send(new DeleteObjectCommand({ Bucket: o.bucket, Key: key })))
      )
  }
}
