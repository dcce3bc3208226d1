import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilHandle, startAnvil } from "../../infra/chain/Anvil"
import { deployUsdc } from "../../infra/chain/deployUsdc"
import { createTestDatabase } from "../support/Database"
import { localChainClients } from "../support/LocalChain"
import { chainServiceEnv, freePort, type ServiceProcess, spawnService } from "../support/Process"
import { type RpcFaultProxy, startRpcFaultProxy } from "../support/RpcFaultProxy"

/**
 * An instance whose chain RPC does not answer at start (issue 47, item 4; decision 0089): it starts anyway, says it
 * is unready on `/v1/health` (503) and `deposits_chain_ready` (0), and becomes ready by itself once the chain
 * answers. A chain that then answers wrongly stops it with the refusal it would have met at start.
 */
let node: AnvilHandle
let wrongChain: AnvilHandle
let token: string
let dataDir: string
const databases: Array<{ url: string; drop: () => Promise<void> }> = []
const proxies: Array<RpcFaultProxy> = []

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "deposits-chain-down-"))
  ;[node, wrongChain] = await Promise.all([startAnvil({ blockTime: 1 }), startAnvil({ chainId: 143 })])
  const { chain } = localChainClients(node, "0x0000000000000000000000000000000000000000")
  token = (await deployUsdc(chain)).address
}, 120_000)
afterAll(async () => {
  await Promise.all([node?.stop(), wrongChain?.stop(), ...proxies.map((p) => p.stop())])
  await Promise.all(databases.map((d) => d.drop()))
  rmSync(dataDir, { recursive: true, force: true })
})

/** A service in the sandbox environment whose only chain endpoint is a proxy that cuts every connection. */
const startBehindDeadProxy = async (upstream: string) => {
  const proxy = await startRpcFaultProxy(upstream)
  proxies.push(proxy)
  proxy.set({ kind: "drop" })
  const database = await createTestDatabase()
  databases.push(database)
  const metricsPort = await freePort()
  const service = await spawnService(
    {
      ...chainServiceEnv({ databaseUrl: database.url, rpcUrl: proxy.url, token, dataDir }),
      SERVICE_ENV: "sandbox",
      METRICS_PORT: String(metricsPort),
      CHAIN_RPC_PROBE_MS: "300"
    },
    60_000,
    undefined,
    503
  )
  const chainReady = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    return /^deposits_chain_ready (\d)$/m.exec(text)?.[1]
  }
  return { proxy, service, chainReady }
}

const exited = (service: ServiceProcess) =>
  new Promise<number | null>((resolve) => {
    if (service.child.exitCode !== null) resolve(service.child.exitCode)
    else service.child.once("exit", (code) => resolve(code))
  })

describe("an instance whose chain does not answer at start", () => {
  it("starts unready, says so on /v1/health and a metric, and becomes ready once the chain answers", async () => {
    const { proxy, service, chainReady } = await startBehindDeadProxy(node.rpcUrl)
    try {
      const health = await fetch(`${service.baseUrl}/v1/health`)
      expect(health.status).toBe(503)
      const body = (await health.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe("service_unavailable")
      expect(body.error.message).toContain("chain")
      expect(body.error.message).not.toContain(proxy.url)
      expect(await chainReady()).toBe("0")
      // The API that needs no chain serves meanwhile.
      expect((await fetch(`${service.baseUrl}/openapi.json`)).status).toBe(200)
      expect(service.output()).toContain("starting unready")

      proxy.set({ kind: "healthy" })
      const until = Date.now() + 20_000
      while ((await fetch(`${service.baseUrl}/v1/health`)).status !== 200 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 200))
      expect((await fetch(`${service.baseUrl}/v1/health`)).status).toBe(200)
      expect(await chainReady()).toBe("1")
      expect(service.output()).toContain("the chain answers: ready")
      expect(service.child.exitCode).toBeNull()
    } finally {
      await service.stop()
    }
  }, 120_000)

  it("stops with the start-up refusal when the chain that comes back is the wrong one", async () => {
    const { proxy, service } = await startBehindDeadProxy(wrongChain.rpcUrl)
    const code = exited(service)
    proxy.set({ kind: "healthy" })
    expect(await code).toBe(78)
    expect(service.output()).toMatch(
      /refusing to start: CHAIN_RPC_URL: the node serves chain 143, this environment needs chain 10143/
    )
  }, 120_000)
})
