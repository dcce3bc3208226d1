import { randomUUID } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import type { DepositRequestEvent } from "../../machines/step"
import { ActorHost } from "../../services/actors/ActorHost"
import { type MerchantClient, merchantClient } from "./Api"
import { createMerchant, type Merchant } from "./Merchant"
import { onService } from "./scopedResources"
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

/** A merchant call to the sandbox's service over HTTP, as an effect. */
export const sandboxCall = <T = Record<string, unknown>>(...args: Parameters<MerchantClient["call"]>) =>
  Effect.flatMap(Sandbox, ({ api }) => Effect.promise(() => api.call<T>(...args)))

/** A payer's call (no credentials) to the sandbox's service: the status and the JSON body. */
export const sandboxPayerCall = <T>(method: string, path: string, body?: unknown) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    Effect.promise(async () => {
      const res = await service.request(path, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
      })
      return { status: res.status, body: (await res.json()) as T }
    })
  )

/** An event given to the sandbox service's own actor host for a `dr_` request, as the watcher or treasury would. */
export const sandboxApply = (id: string, event: DepositRequestEvent) =>
  Effect.flatMap(Sandbox, ({ service }) =>
    onService(
      service,
      Effect.flatMap(ActorHost, (host) =>
        host.apply(id.slice(3), `${event.type}-${randomUUID()}`, event)
      ).pipe(Effect.orDie)
    )
  )
