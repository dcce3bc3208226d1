import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import { ObjectStoreError, type ObjectStoreShape } from "./Contract"
import { SignedLinks } from "./SignedLinks"

/** The path of the embedded store's upload endpoint (outside `/v1`: bytes never go through the API). */
export const UPLOAD_PATH = "/objects/upload"

/**
 * The embedded object store of `npm start`: bytes in PostgreSQL (shared by every instance, like the rest of the
 * record), uploads to this service's own endpoint through links it signs (HMAC, expiring, for one key, size and
 * content type). Meant for the sandbox and small deployments; production points `S3_BUCKET` at real storage.
 */
export const makeEmbeddedObjectStore = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const links = yield* SignedLinks
  const failed = (operation: string) => (cause: unknown) => new ObjectStoreError({ operation, cause })

  const store: ObjectStoreShape = {
    kind: "embedded",
    uploadTarget: (key, o) =>
      Effect.succeed({
        url: `${UPLOAD_PATH}?token=${links.sign({
          use: "upload",
          key,
          exp: Math.floor(o.expiresAt.getTime() / 1000),
          size: o.size,
          type: o.contentType
        })}`,
        method: "PUT" as const,
        headers: { "content-type": o.contentType }
      }),
    read: (key, maxBytes) =>
      sql<{ size: number; content_type: string; bytes: Uint8Array | null }>`
        select length(bytes) as size, content_type,
               case when length(bytes) <= ${maxBytes} then bytes end as bytes
        from stored_objects where key = ${key}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (r) => ({
            size: Number(r.size),
            contentType: r.content_type,
            bytes: r.bytes ?? undefined
          }))
        ),
        Effect.mapError(failed("read"))
      ),
    put: (key, bytes, contentType) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (ms) =>
          sql`
          insert into stored_objects (key, bytes, content_type, created_at)
          values (${key}, ${bytes}, ${contentType}, ${new Date(ms)})
          on conflict do nothing returning 1`
      ).pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.mapError(failed("put"))
      ),
    remove: (key) =>
      sql`delete from stored_objects where key = ${key}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed("remove"))
      )
  }
  return store
})
