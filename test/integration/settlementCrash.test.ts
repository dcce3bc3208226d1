import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { type Address, createTestClient, createWalletClient, http, publicActions, walletActions } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilHandle, anvilChain, anvilDevAccount, startAnvil } from "../../infra/chain/Anvil"
import { deployTestUsdc, mintTestUsdc } from "../../infra/chain/deployTestUsdc"
import { abi } from "../../infra/contracts/TestUsdc"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { createMerchant, type Merchant } from "../support/Merchant"
import { readyRequest } from "../support/Payer"
import { type ServiceProcess, spawnService } from "../support/Process"
import type { RunningService } from "../support/Service"

/**
 * Issue 6: the service as real processes on one PostgreSQL, against a local node. (1) A process SIGKILLed after
 * the settlement was signed and recorded: on restart the payout happens exactly once, with the recorded
 * transaction (even when the node lost it). (2) Two processes; the one doing the chain work is killed mid-flow;
 * the other takes over (leases) and finishes every request; nothing is paid twice.
 */
let node: AnvilHandle
let token: Address
let db: { url: string; drop: () => Promise<void> }
let merchant: Merchant
let dataDir: string
let client: pg.Client
const owner = anvilDevAccount(0)
const payer = anvilDevAccount(5)
let chain: ReturnType<typeof makeChain>

const makeChain = (rpcUrl: string, chainId: number) =>
  createTestClient({ mode: "anvil", chain: anvilChain({ chainId, rpcUrl }), transport: http(rpcUrl) })
    .extend(publicActions)
    .extend(walletActions)

const env = () => ({
  DATABASE_URL: db.url,
  NATS_URL: "nats://127.0.0.1:4222",
  CHAIN_RPC_URL: node.rpcUrl,
  TOKEN_ADDRESS: token,
  DATA_DIR: dataDir,
  RATE_LIMIT_CAPACITY: "10000"
})

/** The merchant client of the test support, over a service running as a child process. */
const over = (service: ServiceProcess) =>
  ({
    baseUrl: service.baseUrl,
    request: (path: string, init?: RequestInit) => fetch(`${service.baseUrl}${path}`, init)
  }) as unknown as RunningService

beforeAll(async () => {
  node = await startAnvil({ slotsInAnEpoch: 1 })
  chain = makeChain(node.rpcUrl, node.chainId)
  token = await deployTestUsdc(
    createWalletClient({ chain: anvilChain(node), transport: http(node.rpcUrl), account: owner }).extend(
      publicActions
    )
  )
  db = await createTestDatabase()
  merchant = await createMerchant(db.url)
  dataDir = mkdtempSync(join(tmpdir(), "deposits-crash-"))
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
}, 60_000)
afterAll(async () => {
  await client?.end()
  await node?.stop()
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

const balanceOf = (who: Address) =>
  chain.readContract({ address: token, abi, functionName: "balanceOf", args: [who] })

/** Mines a block now and then while waiting, so `finalized` keeps moving. */
const mineUntil = async <A>(read: () => Promise<A | undefined>, ms = 45_000): Promise<A> => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const value = await read()
    if (value !== undefined) return value
    await chain.mine({ blocks: 1 })
    await new Promise((r) => setTimeout(r, 150))
  }
  throw new Error("timed out")
}

const payExactly = async (service: ServiceProcess, amount: bigint) => {
  const api = merchantClient(over(service), merchant)
  const payout = privateKeyToAccount(generatePrivateKey()).address
  const request = await readyRequest(
    { service: over(service), api, payer },
    (Number(amount) / 1e6).toString(),
    payout
  )
  await mintTestUsdc(
    createWalletClient({ chain: anvilChain(node), transport: http(node.rpcUrl), account: owner }).extend(
      publicActions
    ),
    { token, to: payer.address, amount }
  )
  const hash = await chain.writeContract({
    address: token,
    abi,
    functionName: "transfer",
    args: [request.address, amount],
    account: payer,
    chain: null
  })
  await chain.waitForTransactionReceipt({ hash })
  return { ...request, payout, api }
}

const statusOf = async (id: string) =>
  (await client.query<{ status: string }>("select status from deposit_requests where id = $1", [id.slice(3)]))
    .rows[0]?.status

const settleRows = async (id: string) =>
  (
    await client.query<{ tx_hash: string; state: string }>(
      "select tx_hash, state from transfers where deposit_request_id = $1 and kind = 'settle'",
      [id.slice(3)]
    )
  ).rows

describe("a process killed mid-settlement", () => {
  it("pays out exactly once after a restart, with the recorded transaction even when the node lost it", async () => {
    let first: ServiceProcess | undefined = await spawnService(env())
    let second: ServiceProcess | undefined
    try {
      const { id, address, payout } = await payExactly(first, 4_000_000n)
      // From here nothing is mined unless the test mines: the settlement waits, signed and recorded.
      await chain.setAutomine(false)
      const recorded = await mineUntil(async () => (await settleRows(id))[0])
      first.child.kill("SIGKILL")
      await new Promise((r) => first!.child.once("exit", r))
      first = undefined
      // As if it had died before the broadcast: the node forgets every pending transaction.
      await chain.request({ method: "anvil_dropAllTransactions", params: [] } as never)
      await chain.setAutomine(true)

      second = await spawnService(env())
      await mineUntil(async () => ((await statusOf(id)) === "settled" ? true : undefined))
      expect(await balanceOf(payout)).toBe(4_000_000n)
      expect(await balanceOf(address)).toBe(0n)
      // The transfer that went through is the one recorded before the crash, never a new one.
      expect(await settleRows(id)).toEqual([{ tx_hash: recorded.tx_hash, state: "confirmed" }])
    } finally {
      await first?.stop("SIGKILL")
      await second?.stop()
      await chain.setAutomine(true)
    }
  })
})

describe("two processes, one killed mid-flow", () => {
  it("lets the other finish every request, paying each exactly once", async () => {
    let a: ServiceProcess | undefined = await spawnService(env())
    const b = await spawnService(env())
    try {
      // Requests made and paid through both; then the chain's progress stops until one process is gone.
      const paid = [
        await payExactly(a, 1_000_000n),
        await payExactly(b, 2_000_000n),
        await payExactly(a, 3_000_000n)
      ]
      await chain.setAutomine(false)
      await chain.mine({ blocks: 1 })
      a.child.kill("SIGKILL")
      await new Promise((r) => a!.child.once("exit", r))
      a = undefined
      await chain.setAutomine(true)
      // B takes the watcher, relay and treasury leases once A's lapse (10 s), and finishes.
      for (const request of paid) {
        await mineUntil(
          async () => ((await statusOf(request.id)) === "settled" ? true : undefined),
          60_000
        ).catch(async (error) => {
          const rows = await client.query("select id, status, received_base_units from deposit_requests")
          const t = await client.query("select deposit_request_id, kind, state from transfers")
          const l = await client.query("select * from leases")
          process.stderr.write(
            `${JSON.stringify({ rows: rows.rows, t: t.rows, l: l.rows })}\n${b.output().slice(-3000)}\n`
          )
          throw error
        })
      }
      const amounts = [1_000_000n, 2_000_000n, 3_000_000n]
      for (const [i, request] of paid.entries()) {
        expect(await balanceOf(request.payout)).toBe(amounts[i])
        expect(await balanceOf(request.address)).toBe(0n)
        expect(await settleRows(request.id)).toHaveLength(1)
      }
      const report = (await (
        await fetch(`${b.baseUrl}/v1/reconciliation`, { headers: merchant.headers() })
      ).json()) as { totals: { requests_with_differences: number } }
      expect(report.totals.requests_with_differences).toBe(0)
    } finally {
      await a?.stop("SIGKILL")
      await b.stop()
    }
  }, 120_000)
})
