import { Context, Effect, Layer } from "effect"
import { type MerchantClient, merchantClient } from "./Api"
import { createMerchant, type Merchant } from "./Merchant"
import { type RunningService, startService } from "./Service"

/** A running service with one merchant account, for tests written with @effect/vitest's `layer`. */
export class Sandbox extends Context.Tag("test/Sandbox")<
  Sandbox,
  { readonly service: RunningService; readonly merchant: Merchant; readonly api: MerchantClient }
>() {}

/** The service (with these start options, resolved when the layer is built) and its merchant, stopped after. */
export const sandboxLayer = (
  options: () => Parameters<typeof startService>[0] | Promise<Parameters<typeof startService>[0]> = () => ({})
) =>
  Layer.scoped(
    Sandbox,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const service = await startService(await options())
        const merchant = await createMerchant(service.databaseUrl)
        return { service, merchant, api: merchantClient(service, merchant) }
      }),
      ({ service }) => Effect.promise(() => service.stop())
    )
  )
