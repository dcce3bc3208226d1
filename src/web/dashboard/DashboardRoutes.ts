import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { objectStoreSettings } from "../../../services/platform/objectStore/ObjectStore"
import { publicBaseUrl } from "../../../services/platform/Settings"
import { ApiSettings } from "../../http/middleware/ApiSettings"
import { dashboardHtml } from "./DashboardPage"
import { dashboardStyles } from "./styles"
import { uploadOrigin } from "./UploadOrigin"

/** Where the merchant dashboard lives (outside `/v1`): one page, client-side routes in the URL's fragment. */
export const DASHBOARD_PATH = "/dashboard/"

/**
 * The checkout's policy, plus the one origin presigned attachment uploads go to (the page PUTs the file there);
 * when that is the service itself, `'self'` already covers it.
 */
export const dashboardCsp = (upload: string, self: string) =>
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  `connect-src 'self'${upload === self ? "" : ` ${upload}`}; ` +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The one way the dashboard's script is bundled (here from source, and by `npm run build`): Preact's JSX. */
export const dashboardBuildOptions = (entry: string) => ({
  entryPoints: [entry],
  bundle: true,
  minify: true,
  format: "iife" as const,
  platform: "browser" as const,
  target: "es2022",
  jsx: "automatic" as const,
  jsxImportSource: "preact",
  write: false,
  legalComments: "none" as const,
  logLevel: "warning" as const
})

/** Built by `npm run build` (`.build/dashboard/app.js`); from source, bundled once on first request. */
const loadScript = Effect.promise(async () => {
  const built = fileURLToPath(new URL("./dashboard/app.js", import.meta.url))
  if (existsSync(built)) return readFileSync(built, "utf8")
  const { build } = await import("esbuild")
  const result = await build(dashboardBuildOptions(fileURLToPath(new URL("./page/app.tsx", import.meta.url))))
  return result.outputFiles?.[0]?.text ?? ""
})

const assetHeaders = { "x-content-type-options": "nosniff", "cache-control": "no-cache" }

export const DashboardRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* ApiSettings
    const store = yield* objectStoreSettings
    const base = yield* publicBaseUrl
    const script = yield* Effect.cached(loadScript)
    const html = dashboardHtml(settings.serviceEnv === "sandbox")
    const pageHeaders = {
      "content-security-policy": dashboardCsp(
        uploadOrigin({ ...store, publicBaseUrl: base }),
        new URL(base).origin
      ),
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-store"
    }
    const page = Effect.sync(() =>
      HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8", headers: pageHeaders })
    )
    // The router ignores a trailing slash: `/dashboard` is this page too (its links are absolute).
    yield* router.get(DASHBOARD_PATH, page)
    yield* router.get(
      `${DASHBOARD_PATH}assets/app.js`,
      Effect.map(script, (text) =>
        HttpServerResponse.text(text, {
          contentType: "text/javascript; charset=utf-8",
          headers: assetHeaders
        })
      )
    )
    yield* router.get(
      `${DASHBOARD_PATH}assets/app.css`,
      Effect.succeed(
        HttpServerResponse.text(dashboardStyles, {
          contentType: "text/css; charset=utf-8",
          headers: assetHeaders
        })
      )
    )
  })
)
