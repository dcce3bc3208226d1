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
