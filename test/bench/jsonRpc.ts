/**
 * Raw JSON-RPC to a local node for the benches, through the `fetch` given (the watcher bench times the service's
 * own fetches by patching the global one, so its own calls go through the original).
 */
export const jsonRpc = (fetchFn: typeof fetch = fetch) => {
  const rpc = async <A>(url: string, body: unknown): Promise<A> => {
    const response = await fetchFn(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return (await response.json()) as A
  }
  const call = async <A>(url: string, method: string, params: Array<unknown> = []): Promise<A> => {
    const r = await rpc<{ result?: A; error?: unknown }>(url, { jsonrpc: "2.0", id: 1, method, params })
    if (r.error !== undefined) throw new Error(`${method}: ${JSON.stringify(r.error)}`)
    return r.result as A
  }
  return { rpc, call }
}
