import { HttpApiBuilder, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { Attachments, DOWNLOAD_PATH } from "../../services/merchants/Attachments"
import { UPLOAD_PATH } from "../../services/platform/objectStore/EmbeddedObjectStore"

/** Paths of this service outside `/v1` that carry bytes, not JSON: the edge leaves their bodies alone. */
export const OBJECT_PATHS = "/objects/"

/** The signed token travels in the query (a path segment would be cut at the router's parameter length). */
const tokenOf = (request: HttpServerRequest.HttpServerRequest) =>
  new URLSearchParams(request.url.slice(request.url.indexOf("?") + 1 || request.url.length)).get("token") ??
  ""

const plain = (status: number, message: string) =>
  HttpServerResponse.unsafeJson(
    { error: { code: status === 403 ? "forbidden" : "upload_refused", message } },
    { status }
  )

/** `attachment; filename="…"` with an ASCII fallback and the exact name in `filename*` (RFC 6266). */
export const contentDisposition = (fileName: string) => {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_")
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`
}

/**
 * The embedded store's upload endpoint and the download endpoint of every store. Downloads are always
 * `application/pdf` with `Content-Disposition: attachment`, `X-Content-Type-Options: nosniff` and a sandboxing
 * CSP: no uploaded byte is ever served as a page of this origin.
 */
export const ObjectRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const attachments = yield* Attachments
    yield* router.put(
      UPLOAD_PATH,
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const token = tokenOf(yield* HttpServerRequest.HttpServerRequest)
        const answer = yield* attachments.receiveUpload(token, request.headers["content-type"], (limit) =>
          HttpIncomingMessage.withMaxBodySize(
            Effect.map(request.arrayBuffer, (buffer) => new Uint8Array(buffer)),
            Option.some(limit)
          ).pipe(Effect.orElseSucceed(() => "TooLarge" as const))
        )
        return answer.status === 200
          ? HttpServerResponse.unsafeJson({ status: "uploaded" }, { status: 200 })
          : plain(answer.status, answer.message)
      }).pipe(Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(plain(503, e.message))))
    )
    yield* router.get(
      DOWNLOAD_PATH,
      Effect.gen(function* () {
        const token = tokenOf(yield* HttpServerRequest.HttpServerRequest)
        const found = yield* attachments.download(token)
        if (Either.isLeft(found)) return plain(found.left.status, found.left.message)
        return HttpServerResponse.uint8Array(found.right.bytes, {
          status: 200,
          contentType: "application/pdf",
          headers: {
            "content-disposition": contentDisposition(found.right.fileName),
            "x-content-type-options": "nosniff",
            "content-security-policy": "sandbox; default-src 'none'",
            "cache-control": "private, no-store"
          }
        })
      }).pipe(Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(plain(503, e.message))))
    )
  })
)
