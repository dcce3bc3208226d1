import { Duration, Effect, Layer, Option, Schedule } from "effect"
import { BaseError, custom, HttpRequestError, RpcRequestError, TimeoutError, toHex } from "viem"
import { getHttpRpcClient } from "viem/utils"
import type { JsonRpc } from "./Finality"
import { chainEndpointSettings, type ChainEndpointSettings, rpcEndpointsOf } from "./ChainSettings"

/**
 * The chain's RPC endpoints (`CHAIN_RPC_URLS`, in the operator's order of preference) behind one request function.
 * Each call goes to the best-ranked endpoint and falls to the next on a fault of the endpoint (connection dropped,
 * time-out, HTTP 429/5xx, a JSON-RPC "limit exceeded" or "internal error"); an answer of the node (a revert, a
 * nonce refused) is an answer and is not asked elsewhere. A round through every endpoint is retried a bounded
 * number of times with a growing pause; then the call fails as a `ChainRpcError`.
 *
 * Ranking is by health, then preference: an endpoint that just failed cools down (250 ms doubling to 30 s) and is
 * asked last meanwhile; one whose head (probed every `CHAIN_RPC_PROBE_MS`) trails the best by more than
 * `CHAIN_RPC_MAX_LAG_BLOCKS`, or that answered for a block it did not have, is asked after the healthy ones until
 * a probe sees it caught up. viem's `fallback` transport was not used: its ranking loop cannot be stopped (it
 * would outlive a graceful shutdown) and it ranks by latency, not by how far behind an endpoint is.
 */
export interface ChainAccess {
  readonly urls: ReadonlyArray<string>
  /** One JSON-RPC call, routed and retried as above. */
  readonly request: JsonRpc
  /** The same as a viem transport, for viem's actions. */
  readonly transport: ReturnType<typeof custom>
  /**
   * Calls answered together by one endpoint (one JSON-RPC batch), accepted only when `accept` holds for the
   * answers; an endpoint whose answers are refused is ranked as lagging and the next is asked.
   */
  readonly together: <A extends ReadonlyArray<unknown>>(
    calls: ReadonlyArray<{ readonly method: string; readonly params: ReadonlyArray<unknown> }>,
    accept: (answers: A) => boolean,
    what: string
  ) => Promise<A>
  /** Reads each endpoint's head once and ranks them (run on a schedule by `ChainEndpoints.Default`). */
  readonly probe: Effect.Effect<void>
  readonly health: () => ReadonlyArray<EndpointHealth>
}

export interface EndpointHealth {
  readonly url: string
  readonly preference: number
  /** Faults in a row; 0 once it answers again. */
  readonly failures: number
  readonly coolingUntil: number
  /** The newest block it reported at the last probe. */
  readonly head: bigint | undefined
  /** Trails the best head by more than the allowed lag, or answered for a block it did not have. */
  readonly lagging: boolean
}

const COOLDOWN_FIRST_MS = 250
const COOLDOWN_MAX_MS = 30_000
const RETRY_PAUSE_MS = 100

/** Whether an error is the endpoint's fault (ask another), not the node's answer to the call. */
export const isEndpointFault = (error: unknown): boolean => {
  if (!(error instanceof BaseError)) return true
  if (error.walk((e) => e instanceof TimeoutError) !== null) return true
  const http = error.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null
  const rpc = error.walk(
    (e) => e instanceof RpcRequestError || typeof (e as { code?: unknown }).code === "number"
  )
  const code = (rpc as { code?: number } | null)?.code
  if (code !== undefined && code !== -1) {
    // Limit exceeded, internal error, rate limited (429 as a JSON-RPC code), QuickNode's limit, method not served.
    return [-32005, -32603, 429, -32007, -32601, -32004, -32002].includes(code)
  }
  // A transport failure with no JSON-RPC answer: connection refused or dropped, or an HTTP error status.
  return http !== null || code === -1
}

class Lagging extends Error {}

export const makeChainAccess = (
  urls: ReadonlyArray<string>,
  settings: Pick<ChainEndpointSettings, "chainRpcTimeoutMs" | "chainRpcRetries" | "chainRpcMaxLagBlocks">
): ChainAccess => {
  const endpoints = urls.map((url, preference) => ({
    url,
    preference,
    client: getHttpRpcClient(url),
    failures: 0,
    coolingUntil: 0,
    head: undefined as bigint | undefined,
    lagging: false
  }))
  type Endpoint = (typeof endpoints)[number]
  let nextId = 1

  const ranked = (): ReadonlyArray<Endpoint> => {
    const now = Date.now()
    const rank = (e: Endpoint) => (e.coolingUntil > now ? 2 : e.lagging ? 1 : 0)
    return [...endpoints].sort((a, b) => rank(a) - rank(b) || a.preference - b.preference)
  }
  const failed = (e: Endpoint) => {
    e.failures += 1
    e.coolingUntil = Date.now() + Math.min(COOLDOWN_MAX_MS, COOLDOWN_FIRST_MS * 2 ** (e.failures - 1))
  }
  const answered = (e: Endpoint) => {
    e.failures = 0
    e.coolingUntil = 0
  }

  const send = async (e: Endpoint, body: Array<{ method: string; params: ReadonlyArray<unknown> }>) => {
    const requests = body.map(({ method, params }) => ({
      jsonrpc: "2.0" as const,
      id: nextId++,
      method,
      params
    }))
    const answers = await e.client.request({ body: requests, timeout: settings.chainRpcTimeoutMs })
    const byId = new Map((answers as ReadonlyArray<{ id: number }>).map((a) => [a.id, a]))
    return requests.map((r) => {
      const a = byId.get(r.id) as { result?: unknown; error?: { code: number; message: string } } | undefined
      if (a === undefined)
        throw new RpcRequestError({ body: r, error: { code: -1, message: "no answer" }, url: e.url })
      if (a.error !== undefined) throw new RpcRequestError({ body: r, error: a.error, url: e.url })
      return a.result
    })
  }

  /** Every endpoint in ranked order, for a bounded number of rounds; the first that does not fault answers. */
  const routed = async <A>(what: string, attempt: (e: Endpoint) => Promise<A>): Promise<A> => {
    let last: unknown = new Error(`no endpoint answered ${what}`)
    for (let round = 0; round <= settings.chainRpcRetries; round += 1) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS * 2 ** (round - 1)))
      for (const e of ranked()) {
        try {
          const result = await attempt(e)
          answered(e)
          return result
        } catch (error) {
          if (error instanceof Lagging) {
            e.lagging = true
            last = error
            continue
          }
          if (!isEndpointFault(error)) {
            answered(e)
            throw error
          }
          failed(e)
          last = error
        }
      }
    }
    throw last
  }

  const request: JsonRpc = ({ method, params }) =>
    routed(method, async (e) => (await send(e, [{ method, params }]))[0])

  const together = <A extends ReadonlyArray<unknown>>(
    calls: ReadonlyArray<{ readonly method: string; readonly params: ReadonlyArray<unknown> }>,
    accept: (answers: A) => boolean,
    what: string
  ) =>
    routed(what, async (e) => {
      const answers = (await send(e, [...calls])) as unknown as A
      if (!accept(answers)) throw new Lagging(`${e.url} has not reached ${what}`)
      return answers
    })

  const probe = Effect.promise(async () => {
    await Promise.all(
      endpoints.map(async (e) => {
        try {
          const [head] = await send(e, [{ method: "eth_blockNumber", params: [] }])
          e.head = BigInt(head as string)
          answered(e)
        } catch {
          failed(e)
        }
      })
    )
    const best = endpoints.reduce((max, e) => (e.head !== undefined && e.head > max ? e.head : max), 0n)
    for (const e of endpoints) {
      e.lagging = e.head === undefined || best - e.head > BigInt(settings.chainRpcMaxLagBlocks)
    }
  })

  return {
    urls,
    request,
    transport: custom({ request: request as never }, { retryCount: 0 }),
    together,
    probe,
    health: () =>
      endpoints.map(({ url, preference, failures, coolingUntil, head, lagging }) => ({
        url,
        preference,
        failures,
        coolingUntil,
        head,
        lagging
      }))
  }
}

/** The block a range read must reach, for `together`: the endpoint's answer for it must not be empty. */
export const blockCall = (block: bigint) => ({
  method: "eth_getBlockByNumber",
  params: [toHex(block), false]
})

/**
 * The process's chain access (`access`), or none when no chain is configured. The probe runs on its own schedule
 * while the layer's scope is open and stops with it.
 */
export class ChainEndpoints extends Effect.Service<ChainEndpoints>()("deposits/ChainEndpoints", {
  scoped: Effect.gen(function* () {
    const settings = yield* chainEndpointSettings
    const urls = rpcEndpointsOf(settings)
    if (urls.length === 0) return { access: Option.none<ChainAccess>() }
    const access = makeChainAccess(urls, settings)
    if (urls.length > 1) {
      yield* Effect.forkScoped(
        Effect.repeat(access.probe, Schedule.spaced(Duration.millis(settings.chainRpcProbeMs)))
      )
    }
    return { access: Option.some(access) }
  })
}) {
  /** A given chain access (a twin of the node, or none), without the settings or the probe: for tests. */
  static readonly Test = (access: Option.Option<ChainAccess>) =>
    Layer.succeed(ChainEndpoints, ChainEndpoints.make({ access }))
}
