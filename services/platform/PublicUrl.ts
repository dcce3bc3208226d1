import { Context, Effect, Layer } from "effect"
import { publicBaseUrl } from "./Settings"

/**
 * Makes this service's own paths absolute under `PUBLIC_BASE_URL` (see `Settings.ts`). Handlers take it as a
 * service (the composition root provides it) rather than importing the root.
 */
export class PublicUrl extends Context.Tag("deposits/PublicUrl")<
  PublicUrl,
  { readonly absolute: (pathOrUrl: string) => string }
>() {
  static readonly layer = Layer.effect(
    PublicUrl,
    Effect.map(publicBaseUrl, (base) => ({
      absolute: (pathOrUrl: string) => (pathOrUrl.startsWith("/") ? `${base}${pathOrUrl}` : pathOrUrl)
    }))
  )
}
