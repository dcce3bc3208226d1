import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A JSON-RPC endpoint of our own in front of a real node, which misbehaves on demand the way hosted providers do:
 * - `drop`: the connection is cut before any answer;
 * - `rate-limit`: HTTP 429;
 * - `stall`: no answer until the client gives up (the socket is closed after `stallMs`);
 * - `behind`: a node `blocks` behind the real head: its block number, `latest` and `finalized` are that far back,
 *   blocks and receipts past its head do not exist, and `eth_getLogs` answers nothing for blocks it has not
 *   reached (an empty list, not an error: the failure behind "paid, but the invoice expired");
 * - `logs-behind`: the head is current, but logs and blocks by number come from a node `blocks` behind (a provider
 *   whose log index, or the backend behind its load balancer, trails the head it reports);
 * - `flap`: every other request is dropped.
 * Batches are answered item by item. Each fault injected is counted by kind.
 */
export type Fault =
  | { readonly kind: "healthy" }
  | { readonly kind: "drop" }
  | { readonly kind: "rate-limit" }
  | { readonly kind: "stall"; readonly stallMs: number }
  | { readonly kind: "behind"; readonly blocks: number }
  | { readonly kind: "logs-behind"; readonly blocks: number }
  | { readonly kind: "flap" }

interface RpcRequest {
  readonly jsonrpc: "2.0"
  readonly id: number | string
  readonly method: string
  readonly params?: ReadonlyArray<unknown>
}

export interface RpcFaultProxy {
  readonly url: string
  set: (fault: Fault) => void
  /** Faults injected so far, by kind (`behind` counts answers it changed). */
  readonly injected: Map<string, number>
  readonly total: () => number
  readonly stop: () => Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const startRpcFaultProxy = async (upstream: string): Promise<RpcFaultProxy> => {
  let fault: Fault = { kind: "healthy" }
  let flapCount = 0
  const injected = new Map<string, number>()
  const count = (kind: string) => injected.set(kind, (injected.get(kind) ?? 0) + 1)

  const forward = async (body: RpcRequest | ReadonlyArray<RpcRequest>): Promise<unknown> => {
    const response = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return response.json()
  }
  const call = async <A>(method: string, params: ReadonlyArray<unknown>) =>
    ((await forward({ jsonrpc: "2.0", id: 0, method, params })) as { result: A }).result

  /** One request as a node `blocks` behind would answer it (only logs and numbered blocks, for `logs-behind`). */
  const answerBehind = async (
    request: RpcRequest,
    { kind, blocks }: { readonly kind: "behind" | "logs-behind"; readonly blocks: number }
  ): Promise<unknown> => {
    const real = BigInt(await call<string>("eth_blockNumber", []))
    const head = real - BigInt(blocks) < 0n ? 0n : real - BigInt(blocks)
    const hex = (n: bigint) => `0x${n.toString(16)}`
    const result = (value: unknown, changed: boolean) => {
      if (changed) count("behind")
      return { jsonrpc: "2.0", id: request.id, result: value }
    }
    const params = request.params ?? []
    const tagged = request.method === "eth_getBlockByNumber" && !/^0x/.test(String(params[0]))
    if (kind === "logs-behind" && (request.method === "eth_blockNumber" || tagged)) return forward(request)
    switch (request.method) {
      case "eth_blockNumber":
        return result(hex(head), true)
      case "eth_getBlockByNumber": {
        const tag = params[0] as string
        let number: bigint
        if (tag === "latest" || tag === "pending") number = head
        else if (tag === "finalized" || tag === "safe") {
          const real = await call<{ number: string } | null>("eth_getBlockByNumber", [tag, false])
          const behind = BigInt(real?.number ?? "0x0") - BigInt(blocks)
          number = behind < 0n ? 0n : behind
        } else number = BigInt(tag)
        if (number > head) return result(null, true)
        return result(
          await call("eth_getBlockByNumber", [hex(number), params[1] ?? false]),
          tag !== hex(number)
        )
      }
      case "eth_getLogs": {
        const logs = await call<ReadonlyArray<{ blockNumber: string }>>("eth_getLogs", params)
        const seen = logs.filter((log) => BigInt(log.blockNumber) <= head)
        return result(seen, seen.length !== logs.length)
      }
      case "eth_getTransactionReceipt": {
        const receipt = await call<{ blockNumber: string } | null>(request.method, params)
        const hidden = receipt !== null && BigInt(receipt.blockNumber) > head
        return result(hidden ? null : receipt, hidden)
      }
      default:
        return forward(request)
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.parse(await readBody(req)) as RpcRequest | ReadonlyArray<RpcRequest>
    const current = fault
    const dropped = current.kind === "drop" || (current.kind === "flap" && flapCount++ % 2 === 0)
    if (dropped) {
      count(current.kind)
      req.socket.destroy()
      return
    }
    if (current.kind === "rate-limit") {
      count("rate-limit")
      res.writeHead(429, { "content-type": "application/json", "retry-after": "1" })
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } })
      )
      return
    }
    if (current.kind === "stall") {
      count("stall")
      setTimeout(() => req.socket.destroy(), current.stallMs)
      return
    }
    const answer =
      current.kind === "behind" || current.kind === "logs-behind"
        ? Array.isArray(body)
          ? await Promise.all(body.map((r: RpcRequest) => answerBehind(r, current)))
          : await answerBehind(body as RpcRequest, current)
        : await forward(body)
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify(answer))
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    set: (next) => {
      fault = next
      flapCount = 0
    },
    injected,
    total: () => [...injected.values()].reduce((a, b) => a + b, 0),
    stop: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
