import { Data, Effect } from "effect"
import { type Finality, finalBlockNumber, type JsonRpc } from "./Finality"

/** A chain node call that failed or was refused: typed, so a worker decides what a node outage means. */
export class ChainRpcError extends Data.TaggedError("ChainRpcError")<{
  readonly method: string
  readonly cause: unknown
}> {
  /** One line: viem's errors carry a short message beside a long, multi-line one. */
  override get message() {
    const cause = this.cause as { readonly shortMessage?: unknown; readonly message?: unknown } | undefined
    const text = String(cause?.shortMessage ?? cause?.message ?? cause).split("\n")[0]
    return `chain RPC ${this.method} failed: ${text}`
  }
}

/** The one way services call the chain: the call's failure becomes a `ChainRpcError` naming the method. */
export const chainCall = <A>(method: string, call: () => Promise<A>): Effect.Effect<A, ChainRpcError> =>
  Effect.tryPromise({ try: call, catch: (cause) => new ChainRpcError({ method, cause }) })

/** A raw JSON-RPC request (a viem client's `request`), for callers that want the node's own fields. */
export const rpcCall =
  (request: JsonRpc) =>
  <A>(method: string, params: ReadonlyArray<unknown>): Effect.Effect<A, ChainRpcError> =>
    chainCall(method, () => request({ method, params }) as Promise<A>)

/** The newest final block by the configured rule (CHAIN_FINALITY). */
export const finalBlock = (request: JsonRpc, finality: Finality) =>
  chainCall("finalBlockNumber", () => finalBlockNumber(request, finality))
