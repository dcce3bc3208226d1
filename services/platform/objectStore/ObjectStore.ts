import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import type { ObjectStoreShape } from "./Contract"
import { makeEmbeddedObjectStore } from "./EmbeddedObjectStore"
import { makeS3ObjectStore } from "./S3ObjectStore"
import { optionalSetting } from "../Settings"
import { withMethodSpans } from "../Spans"

export {
  ObjectStoreError,
  type ObjectStoreShape,
  type StoredObject,
  type UploadTarget
} from "./Contract"

/**
 * `S3_BUCKET` selects S3; then `S3_ENDPOINT` (unset: AWS), `S3_REGION`, `S3_ACCESS_KEY_ID`,
 * `S3_SECRET_ACCESS_KEY` (unset: the SDK's default credential chain) and `S3_FORCE_PATH_STYLE` (MinIO, s3rver).
 */
export const objectStoreSettings = Config.all({
  s3Bucket: optionalSetting("S3_BUCKET", "must be a bucket name", (b) =>
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(b)
  ),
  s3Endpoint: optionalSetting("S3_ENDPOINT", "must be an http(s) URL", (url) => /^https?:\/\/\S+$/.test(url)),
  s3Region: Config.string("S3_REGION").pipe(Config.withDefault("us-east-1")),
  s3AccessKeyId: Config.option(Config.string("S3_ACCESS_KEY_ID")),
  s3SecretAccessKey: Config.option(Config.redacted("S3_SECRET_ACCESS_KEY")),
  s3ForcePathStyle: Config.boolean("S3_FORCE_PATH_STYLE").pipe(Config.withDefault(false))
})
export type ObjectStoreSettings = Config.Config.Success<typeof objectStoreSettings>

const traced = (store: ObjectStoreShape) =>
  withMethodSpans("ObjectStore", store, ["uploadTarget", "read", "put", "remove"])

/**
 * The object store port: one layer per implementation (`embedded`, bytes in the database; `s3(bucket, settings)`); the
 * composition root chooses (`src/app/Ports.ts`, from `S3_BUCKET`).
 */
export class ObjectStore extends Context.Tag("deposits/ObjectStore")<ObjectStore, ObjectStoreShape>() {
  static readonly embedded = Layer.effect(ObjectStore, Effect.map(makeEmbeddedObjectStore, traced))
  static readonly s3 = (bucket: string, settings: ObjectStoreSettings) =>
    Layer.sync(ObjectStore, () =>
      traced(
        makeS3ObjectStore({
          bucket,
          endpoint: Option.getOrUndefined(settings.s3Endpoint),
          region: settings.s3Region,
          forcePathStyle: settings.s3ForcePathStyle,
          credentials: Option.getOrUndefined(
            Option.all({ accessKeyId: settings.s3AccessKeyId, secret: settings.s3SecretAccessKey }).pipe(
              Option.map(({ accessKeyId, secret }) => ({
                accessKeyId,
                secretAccessKey: Redacted.value(secret)
              }))
            )
          )
        })
      )
    )
}
