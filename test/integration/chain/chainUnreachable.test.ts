import { createServer } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { ChainRpcError, chainCall } from "../../../services/chain/ChainRpc"
import { Sandbox, sandboxLayer } from "../../support/Sandbox"

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

/** The RPC address of the node that does not answer. */
class DeadNode extends Context.Tag("test/DeadNode")<DeadNode, { readonly rpcUrl: string }>() {}

const DeadNodeLive = Layer.effect(
  DeadNode,
  Effect.promise(deadPort).pipe(Effect.map((port) => ({ rpcUrl: `http://127.0.0.1:${port}` })))
)

/** The service configured with that node as its only chain endpoint. */
const SandboxLive = Layer.unwrapEffect(
  Effect.map(DeadNode, ({ rpcUrl }) =>
    sandboxLayer(() => ({
      config: {
        chainRpcUrl: Option.some(rpcUrl),
        tokenAddress: Option.some("0x5FbDB2315678afecb367f032d93F642f64180aa3")
      }
    }))
  )
).pipe(Layer.provideMerge(DeadNodeLive))

layer(SandboxLive, { timeout: 60_000 })("a chain node that does not answer", (it) => {
  it.effect("fails a chain call as a ChainRpcError that names the method", () =>
    Effect.gen(function* () {
      const { rpcUrl } = yield* DeadNode
      const failure = yield* Effect.flip(
        chainCall("eth_blockNumber", () =>
          fetch(rpcUrl, {
            method: "POST",
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] })
          })
        )
      )
      assert.instanceOf(failure, ChainRpcError)
      assert.strictEqual(failure._tag, "ChainRpcError")
      assert.strictEqual(failure.method, "eth_blockNumber")
      assert.match(failure.message, /^chain RPC eth_blockNumber failed: /)
    })
  )

  it.effect("makes a reconciliation answer 503 service_unavailable with Retry-After, not a 500", () =>
    Effect.gen(function* () {
      const { api } = yield* Sandbox
      const answer = yield* Effect.promise(() => api.call("GET", "/v1/reconciliation"))
      assert.strictEqual(answer.status, 503)
      assert.strictEqual(answer.headers.get("retry-after"), "5")
      assert.strictEqual((answer.body as { error: { code: string } }).error.code, "service_unavailable")
    })
  )
})
