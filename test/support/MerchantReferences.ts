import { Context, Effect, Layer } from "effect"
import { Sandbox } from "./Sandbox"

/** The Sandbox merchant's issuer and payout address, the two references every deposit request needs. */
export class MerchantReferences extends Context.Tag("test/MerchantReferences")<
  MerchantReferences,
  { readonly issuerId: string; readonly payoutAddressId: string }
>() {}

/** The references made once over HTTP, as the merchant makes them, when the layer is built. */
export const merchantReferencesLayer = Layer.effect(
  MerchantReferences,
  Effect.flatMap(Sandbox, ({ api }) => Effect.promise(() => api.setup()))
)

/** A Sandbox (and what else its layer gives) and its merchant's references, for suites that create requests. */
export const sandboxWithReferences = <ROut, E, R>(sandbox: Layer.Layer<ROut, E, R>) =>
  merchantReferencesLayer.pipe(Layer.provideMerge(sandbox))
