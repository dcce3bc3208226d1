/**
 * CORS by route kind. Merchant routes answer only the dashboard origin and the API reference, whose page runs in an
 * opaque origin and so calls with `Origin: null` (DocsPolicy.ts); payer reads are public (`*`, no credentials
 * involved); payer writes answer only the hosted checkout origin.
 *
 * Answering `null` gives no page any authority it did not already hold: merchant routes authenticate only by an
 * `Authorization` header the calling page must itself have, and the service sets no cookie, so nothing ambient is
 * ever sent (decision 0078).
 */
export type RouteKind = "merchant" | "payer_read" | "payer_write" | "public" | "same_origin"

/** The sandbox sign-in (src/sandbox/SandboxRoutes.ts): for the dashboard's own page only, never another origin. */
export const SAME_ORIGIN_PREFIX = "/dashboard/sandbox/"

export const PAYER_PREFIX = "/v1/payer/"

export const routeKind = (path: string, method: string): RouteKind => {
  if (path.startsWith(PAYER_PREFIX))
    return method === "GET" || method === "HEAD" ? "payer_read" : "payer_write"
  if (path.startsWith("/v1/")) return path === "/v1/health" ? "public" : "merchant"
  if (path.startsWith(SAME_ORIGIN_PREFIX)) return "same_origin"
  return "public"
}

/** How a browser names a sandboxed document's origin, as the API reference's is. */
export const OPAQUE_ORIGIN = "null"

export interface CorsOrigins {
  readonly dashboardOrigin: string
  readonly checkoutOrigin: string
}

const exposed =
  "X-Request-Id, Idempotency-Replayed, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"
const allowedHeaders = "Authorization, Content-Type, Idempotency-Key, X-Request-Id"

const publicHeaders: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": exposed
}

/** Headers for an actual (non-preflight) response. */
export const corsHeaders = (
  kind: RouteKind,
  origin: string | undefined,
  origins: CorsOrigins
): Record<string, string> => {
  switch (kind) {
    case "payer_read":
    case "public":
      return publicHeaders
    case "merchant":
      return origin === origins.dashboardOrigin || origin === OPAQUE_ORIGIN
        ? { "access-control-allow-origin": origin, "access-control-expose-headers": exposed, vary: "Origin" }
        : { vary: "Origin" }
    case "same_origin":
      return { vary: "Origin" }
    case "payer_write":
      return origin === origins.checkoutOrigin
        ? { "access-control-allow-origin": origin, "access-control-expose-headers": exposed, vary: "Origin" }
        : { vary: "Origin" }
  }
}

/**
 * A preflight names the method it wants in `Access-Control-Request-Method`, so the route kind is decided by that
 * method: a payer write from a stranger's origin is refused even though a payer read from it is allowed.
 */
export const preflightHeaders = (
  path: string,
  requestedMethod: string,
  origin: string | undefined,
  origins: CorsOrigins
): Record<string, string> => {
  const kind = routeKind(path, requestedMethod.toUpperCase())
  const base = corsHeaders(kind, origin, origins)
  if (base["access-control-allow-origin"] === undefined) return base
  const { "access-control-expose-headers": _, ...rest } = base
  return {
    ...rest,
    "access-control-allow-methods":
      kind === "payer_read" ? "GET, HEAD" : kind === "payer_write" ? "POST" : "GET, POST, PATCH, DELETE",
    "access-control-allow-headers": allowedHeaders,
    "access-control-max-age": "600",
    vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
  }
}
