import { Data, type Effect, type Option } from "effect"

/** The store failed or could not be reached: the caller answers 503 or tries again later. */
export class ObjectStoreError extends Data.TaggedError("ObjectStoreError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    const cause = this.cause as { readonly message?: unknown } | undefined
    return `object store ${this.operation} failed: ${String(cause?.message ?? cause).split("\n")[0]}`
  }
}

/** Where and how the bytes are sent: `url` is absolute (S3) or a path of this service (the embedded store). */
export interface UploadTarget {
  readonly url: string
  readonly method: "PUT"
  readonly headers: Readonly<Record<string, string>>
}

/** An object as stored; `bytes` is absent when it is larger than the reader asked for. */
export interface StoredObject {
  readonly size: number
  readonly contentType: string
  readonly bytes: Uint8Array | undefined
}

/**
 * Object storage behind one interface: an S3-compatible store in production (AWS S3, Cloudflare R2, MinIO, through
 * the AWS SDK v3), or the embedded store of `npm start` (bytes in PostgreSQL, uploads to an HMAC-signed endpoint of
 * this service outside `/v1`). Uploads go to a presigned URL for one key, one size and one content type, valid
 * until `expiresAt`; an upload over an existing object is refused (S3: `If-None-Match: *`).
 */
export interface ObjectStoreShape {
  readonly kind: "embedded" | "s3"
  readonly uploadTarget: (
    key: string,
    o: { readonly size: number; readonly contentType: string; readonly expiresAt: Date }
  ) => Effect.Effect<UploadTarget, ObjectStoreError>
  readonly read: (
    key: string,
    maxBytes: number
  ) => Effect.Effect<Option.Option<StoredObject>, ObjectStoreError>
  /** Stores an object unless one is there already: false when it was (nothing is overwritten). */
  readonly put: (
    key: string,
    bytes: Uint8Array,
    contentType: string
  ) => Effect.Effect<boolean, ObjectStoreError>
  readonly remove: (key: string) => Effect.Effect<void, ObjectStoreError>
}
