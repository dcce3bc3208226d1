import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { uuidFromId } from "../../../services/domain/PrefixedId"
import { ApiSettings } from "../../http/middleware/ApiSettings"
import { checkoutHtml } from "./CheckoutPage"
import { favicon } from "./Favicon"
import { styles } from "./page/styles"

/** Where the hosted checkout lives (outside `/v1`): `/checkout/dr_…`, and its two assets. */
export const CHECKOUT_PATH = "/checkout/"

/** Nothing but this origin: no CDN, no inline script or style, no framing. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const pageHeaders = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/**
 * The page's script: built by `npm run build` beside the compiled service (`.build/checkout/app.js`); when the
 * service runs from source, bundled once with esbuild on first request (a development dependency).
 */
const loadScript = Effect.promise(async () => {
  const built = fileURLToPath(new URL("./checkout/app.js", import.meta.url))
  if (existsSync(built)) return readFileSync(built, "utf8")
  const { build } = await import("esbuild")
  const result = await build(checkoutBuildOptions(fileURLToPath(new URL("./page/app.ts", import.meta.url))))
  return result.outputFiles?.[0]?.text ?? ""
})

/** The one way the checkout's script is bundled (here from source, and by `npm run build`). */
export const checkoutBuildOptions = (entry: string) => ({
  entryPoints: [entry],
  bundle: true,
  minify: true,
  format: "iife" as const,
  platform: "browser" as const,
  target: "es2022",
  write: false,
  legalComments: "none" as const,
  logLevel: "warning" as const
})

export const CheckoutRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* ApiSettings
    const script = yield* Effect.cached(loadScript)
    const html = checkoutHtml(settings.serviceEnv === "sandbox", settings.checkoutNetwork)
    const icon = favicon()
    // Every page of this origin (checkout, docs, dashboard) gets it; a day's caching is plenty for an icon.
    yield* router.get(
      "/favicon.ico",
      Effect.sync(() =>
        HttpServerResponse.uint8Array(icon, {
          contentType: "image/x-icon",
          headers: { "x-content-type-options": "nosniff", "cache-control": "public, max-age=86400" }
        })
      )
    )
    yield* router.get(
      `${CHECKOUT_PATH}assets/app.js`,
      Effect.map(script, (text) =>
        HttpServerResponse.text(text, {
          contentType: "text/javascript; charset=utf-8",
          headers: { "x-content-type-options": "nosniff", "cache-control": "no-cache" }
        })
      )
    )
    yield* router.get(
      `${CHECKOUT_PATH}assets/app.css`,
      Effect.succeed(
        HttpServerResponse.text(styles, {
          contentType: "text/css; charset=utf-8",
          headers: { "x-content-type-options": "nosniff", "cache-control": "no-cache" }
        })
      )
    )
    yield* router.get(
      `${CHECKOUT_PATH}:id`,
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const id = request.url.split("?")[0]?.slice(CHECKOUT_PATH.length) ?? ""
        // A malformed id gets the page too, with a 404: it says "not found" the way an unknown request does.
        return HttpServerResponse.text(html, {
          status: uuidFromId("dr", id) === undefined ? 404 : 200,
          contentType: "text/html; charset=utf-8",
          headers: pageHeaders
        })
      })
    )
  })
)
