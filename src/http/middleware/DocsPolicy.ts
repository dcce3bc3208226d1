import { createHash } from "node:crypto"
import { HttpServerResponse } from "@effect/platform"

/** Where the API reference is served (`HttpApiScalar` in src/app/Server.ts). */
export const DOCS_PATH = "/docs"

/**
 * The reference page's policy. Scalar's page is one HTML document with its script inline (the bundle and the line
 * that hands it its configuration); each inline script is allowed by its digest, so nothing else can run, and
 * nothing may be fetched from another origin. Scalar compiles WebAssembly (which `'wasm-unsafe-eval'` allows without
 * allowing JavaScript's eval) and adds its styles at run time, hence inline styles.
 *
 * `sandbox` without `allow-same-origin` runs the page in an opaque origin (decision 0078): a 3 MB third-party bundle
 * shares the dashboard's host, and this way it cannot read the dashboard's session or sign-in secret from storage,
 * nor script a dashboard tab it opens. Its requests to the API go out with `Origin: null` (see Cors.ts).
 */
export const docsPolicyFor = (html: string): string => {
  const digests = [
    ...html.matchAll(/<script(?![^>]*type="application\/json")[^>]*>([\s\S]*?)<\/script>/g)
  ].map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`)
  return (
    `default-src 'none'; script-src ${digests.join(" ")} 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
    "frame-ancestors 'none'; sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox allow-forms allow-downloads"
  )
}

/**
 * Storage for the sandboxed page: an opaque origin has no `localStorage` or `sessionStorage` (reading either
 * throws), and Scalar keeps its layout and the token typed into its client there. In memory, both are forgotten when
 * the page closes, which is what a token typed into a reference page should be.
 */
export const MEMORY_STORAGE_SCRIPT = `(()=>{const make=()=>{const m=new Map();return{get length(){return m.size},key:(i)=>[...m.keys()][i]??null,getItem:(k)=>m.has(String(k))?m.get(String(k)):null,setItem:(k,v)=>{m.set(String(k),String(v))},removeItem:(k)=>{m.delete(String(k))},clear:()=>{m.clear()}}};for(const name of["localStorage","sessionStorage"]){try{window[name]}catch{Object.defineProperty(window,name,{value:make(),configurable:true})}}})();`

/** The page with the storage script first in its head, so it runs before Scalar's bundle. */
export const withMemoryStorage = (html: string): string =>
  html.replace(/<head([^>]*)>/i, (head) => `${head}<script>${MEMORY_STORAGE_SCRIPT}</script>`)

const decoder = new TextDecoder()
const encoder = new TextEncoder()

/**
 * The reference page's answer with its storage script and its policy. The page never changes while the service
 * runs, so both are worked out once, from the page itself.
 */
export const makeDocsPolicy = () => {
  let page: { readonly html: Uint8Array; readonly policy: string } | undefined
  return (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
    if (response.status !== 200 || response.body._tag !== "Uint8Array") return response
    if (page === undefined) {
      const html = withMemoryStorage(decoder.decode(response.body.body))
      page = { html: encoder.encode(html), policy: docsPolicyFor(html) }
    }
    const { html, policy } = page
    return HttpServerResponse.setHeaders(
      HttpServerResponse.uint8Array(html, {
        status: 200,
        headers: response.headers,
        contentType: response.body.contentType
      }),
      {
        "content-security-policy": policy,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer"
      }
    )
  }
}
