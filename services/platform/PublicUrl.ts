import { Effect } from "effect"
import { publicBaseUrl } from "./Settings"

/**
 * Makes this service's own paths absolute under `PUBLIC_BASE_URL` (see `Settings.ts`). Handlers take it as a
 * service (the composition root provides it) rather than importing the root.
 */
export class PublicUrl extends Effect.Service<PublicUrl>()("deposits/PublicUrl", {
  effect: Effect.map(publicBaseUrl, (base) => ({
    // A plain function: handlers call it while writing an answer (a string join, no span).
    absolute: (pathOrUrl: string): string => (pathOrUrl.startsWith("/") ? `${base}${pathOrUrl}` : pathOrUrl)
  }))
}) {}
