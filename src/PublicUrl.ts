import { HttpServer } from "@effect/platform"
import { Config, Context, Effect, Layer, Option } from "effect"
import { optionalSetting } from "../services/Settings"

/** `PUBLIC_BASE_URL`: the origin payers and merchants reach this service at (links to its upload and download endpoints). */
export const publicBaseUrlSetting = optionalSetting("PUBLIC_BASE_URL", "must be an http(s) origin", (url) =>
  /^https?:\/\/[^/\s]+$/.test(url.replace(/\/+$/, ""))
)

/**
 * Makes this service's own paths absolute: `PUBLIC_BASE_URL`, or else the address the server listens on (right for
 * the sandbox on loopback; behind a proxy or on 0.0.0.0, set the setting).
 */
export class PublicUrl extends Context.Tag("deposits/PublicUrl")<
  PublicUrl,
  { readonly absolute: (pathOrUrl: string) => string }
>() {
  static readonly layer = Layer.effect(
    PublicUrl,
    Effect.gen(function* () {
      const configured = yield* Config.all({ url: publicBaseUrlSetting })
      const server = yield* HttpServer.HttpServer
      const base = Option.getOrElse(
        Option.map(configured.url, (u) => u.replace(/\/+$/, "")),
        () =>
          server.address._tag === "TcpAddress"
            ? `http://${server.address.hostname === "0.0.0.0" ? "127.0.0.1" : server.address.hostname}:${server.address.port}`
            : "http://localhost"
      )
      return {
        absolute: (pathOrUrl: string) => (pathOrUrl.startsWith("/") ? `${base}${pathOrUrl}` : pathOrUrl)
      }
    })
  )
}
