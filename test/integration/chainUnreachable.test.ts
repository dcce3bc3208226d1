import { createServer } from "node:net"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { ChainRpcError, chainCall } from "../../services/ChainRpc"
import { merchantClient } from "../support/Api"
import { createMerchant, type Merchant } from "../support/Merchant"
import { type RunningService, startService } from "../support/Service"

// A chain node that refuses every connection: a chain call fails as a typed ChainRpcError naming the method, and
// a reconciliation (which reads chain balances) answers 503 service_unavailable instead of a 500.

/** A loopback port nothing listens on: bound once to learn a free port, then closed. */
const deadPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

class Sandbox extends Context.Tag("test/Sandbox")<
  Sandbox,
  { readonly service: RunningService; readonly merchant: Merchant; readonly rpcUrl: string }
>() {}

const SandboxLive = Layer.scoped(
  Sandbox,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const rpcUrl = `http://127.0.0.1:${await deadPort()}`
      const service = await startService({
        config: {
          chainRpcUrl: Option.some(rpcUrl),
          tokenAddress: Option.some("0x5FbDB2315678afecb367f032d93F642f64180aa3")
        }
      })
      return { service, merchant: await createMerchant(service.databaseUrl), rpcUrl }
    }),
    ({ service }) => Effect.promise(() => service.stop())
  )
)

layer(SandboxLive, { timeout: 60_000 })("a chain node that does not answer", (it) => {
  it.effect("fails a chain call as a ChainRpcError that names the method", () =>
    Effect.gen(function* () {
      const { rpcUrl } = yield* Sandbox
      const failure = yield* Effect.flip(
        chainCall("eth_blockNumber", () =>
          fetch(rpcUrl, {
            method: "POST",
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] })
          })
        )
      )
      expect(failure).toBeInstanceOf(ChainRpcError)
      expect(failure.method).toBe("eth_blockNumber")
      expect(failure.message).toMatch(/^chain RPC eth_blockNumber failed: /)
    })
  )

  it.effect("makes a reconciliation answer 503 service_unavailable with Retry-After, not a 500", () =>
    Effect.gen(function* () {
      const { service, merchant } = yield* Sandbox
      const answer = yield* Effect.promise(() =>
        merchantClient(service, merchant).call("GET", "/v1/reconciliation")
      )
      expect(answer.status).toBe(503)
      expect(answer.headers.get("retry-after")).toBe("5")
      expect((answer.body as { error: { code: string } }).error.code).toBe("service_unavailable")
    })
  )
})
