import { Context, Effect, Layer } from "effect"
import type { AnvilOptions } from "../../infra/chain/Anvil"
import { type ChainService, startChainService } from "./ChainService"
import { type LocalChain, startLocalChain } from "./LocalChain"

/** A local chain (see `startLocalChain`) for the scope, stopped when the scope closes. */
export const scopedLocalChain = (options: AnvilOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startLocalChain(options)),
    (local) => Effect.promise(() => local.node.stop())
  )

/** The whole service on that chain with a merchant (see `startChainService`), stopped when the scope closes. */
export const scopedChainService = (
  local: LocalChain,
  options: Parameters<typeof startChainService>[1] = {}
) =>
  Effect.acquireRelease(
    Effect.promise(() => startChainService(local, options)),
    (running) => Effect.promise(() => running.stop())
  )

/** A local chain and the whole service on it, for tests that need nothing else besides. */
export class ChainServiceFixture extends Context.Tag("test/ChainServiceFixture")<
  ChainServiceFixture,
  ChainService & { readonly local: LocalChain }
>() {}

/** For `layer`: a local chain with these options, then the service on it; the service stops first. */
export const chainServiceLayer = (
  chainOptions: AnvilOptions = {},
  serviceOptions: Parameters<typeof startChainService>[1] = {}
) =>
  Layer.scoped(
    ChainServiceFixture,
    Effect.gen(function* () {
      const local = yield* scopedLocalChain(chainOptions)
      const running = yield* scopedChainService(local, serviceOptions)
      return { ...running, local }
    })
  )

/** What the chain tests read of a request. */
export interface RequestView {
  readonly status: string
  readonly attention: { readonly code: string; readonly message: string; readonly resolution: string } | null
}

/** The request's view once `accept` holds, blocks mined meanwhile (finality moves only as blocks are mined). */
export const untilRequest = (id: string, accept: (v: RequestView) => boolean) =>
  Effect.flatMap(ChainServiceFixture, ({ local, api }) =>
    Effect.promise(() =>
      local.mineUntil(async () => {
        const res = await api.call<RequestView>("GET", `/v1/deposit-requests/${id}`)
        return accept(res.body) ? res.body : undefined
      })
    )
  )

/** The request's view once it reaches `status`, blocks mined meanwhile. */
export const untilStatus = (id: string, status: string) => untilRequest(id, (v) => v.status === status)

/** An operator's resume of the request, with a dashboard session. */
export const resumeRequest = (id: string) =>
  Effect.flatMap(ChainServiceFixture, ({ service, merchant }) =>
    Effect.promise(() =>
      service.request(`/v1/deposit-requests/${id}/resume`, {
        method: "POST",
        headers: merchant.headers("session")
      })
    )
  )
