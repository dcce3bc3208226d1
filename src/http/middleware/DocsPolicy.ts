import { createHash } from "node:crypto"
import { HttpServerResponse } from "@effect/platform"

/** Where the API reference is served (`HttpApiScalar` in src/app/Server.ts). */
export const DOCS_PATH = "/docs"

/**
 * The reference page's policy. Scalar's page is one HTML document with its script inline (the bundle and the line
 * that hands it its configuration); each inline script is allowed by its digest, so nothing else can run, and
 * nothing may be fetched from another origin. Scalar compiles WebAssembly (which `'wasm-unsafe-eval'` allows without
 * allowing JavaScript's eval) and adds its styles at run time, hence inline styles.
 */
export const docsPolicyFor = (html: string): string => {
  const digests = [
    ...html.matchAll(/<script(?![^>]*type="application\/json")[^>]*>([\s\S]*?)<\/script>/g)
  ].map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`)
  return (
    `default-src 'none'; script-src ${digests.join(" ")} 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
    "frame-ancestors 'none'"
  )
}

const decoder = new TextDecoder()

/**
 * The reference page's answer with its policy. The page never changes while the service runs, so its policy is
 * worked out once, from the page itself.
 */
export const makeDocsPolicy = () => {
  let policy: string | undefined
  return (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
    if (response.status !== 200 || response.body._tag !== "Uint8Array") return response
    policy ??= docsPolicyFor(decoder.decode(response.body.body))
    return HttpServerResponse.setHeaders(response, {
      "content-security-policy": policy,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer"
    })
  }
}
