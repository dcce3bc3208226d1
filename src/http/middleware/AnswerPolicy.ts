/**
 * Headers every answer of the service carries. `nosniff`: a browser never reads a JSON answer (or an error) as
 * another type. `no-store` unless a route says how it may be cached: answers carry secrets once (a session token,
 * an API key, a webhook secret) and per-account data, which no shared or browser cache may keep. HSTS only behind
 * https, where a browser that once reached the service never falls back to plain HTTP (two years, as the
 * preload list asks; subdomains included, since the service's host serves nothing over plain HTTP).
 */
export const NO_SNIFF = "nosniff"
export const NO_STORE = "no-store"
export const STRICT_TRANSPORT = "max-age=63072000; includeSubDomains"

export const answerPolicyHeaders = (httpsOnly: boolean): Readonly<Record<string, string>> =>
  httpsOnly
    ? { "x-content-type-options": NO_SNIFF, "strict-transport-security": STRICT_TRANSPORT }
    : { "x-content-type-options": NO_SNIFF }
