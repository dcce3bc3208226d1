import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { formatAmount } from "../../../services/domain/Amount"
import { merchantClient } from "../../support/Api"
import { createTestDatabase } from "../../support/Database"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import { chainServiceEnv, type ServiceProcess, spawnService } from "../../support/Process"
import { httpTarget } from "../../support/Service"

/**
 * Issue 6: the service as real processes on one PostgreSQL, against a local node. (1) A process SIGKILLed after
 * the settlement was signed and recorded: on restart the payout happens exactly once, with the recorded
 * transaction (even when the node lost it). (2) Two processes; the one doing the chain work is killed mid-flow;
 * the other takes over (leases) and finishes every request; nothing is paid twice.
 */
let local: LocalChain
let db: { url: string; drop: () => Promise<void> }
let merchant: Merchant
let dataDir: string
let client: pg.Client
const payer = anvilDevAccount(5)

const env = () =>
  chainServiceEnv({
    databaseUrl: db.url,
    rpcUrl: local.node.rpcUrl,
    token: local.token,
    dataDir
  })

/** The merchant client of the test support, over a service running as a child process. */
const over = (service: ServiceProcess) => httpTarget(service.baseUrl)

beforeAll(async () => {
  local = await startLocalChain()
  db = await createTestDatabase()
  merchant = await createMerchant(db.url)
  dataDir = mkdtempSync(join(tmpdir(), "deposits-crash-"))
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
}, 60_000)
afterAll(async () => {
  await client?.end()
  await local?.node.stop()
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

// Child processes are slower to react than an in-process service: wait longer by default.
const mineUntil = <A>(read: () => Promise<A | undefined>, ms = 45_000) => local.mineUntil(read, ms)

const payExactly = async (service: ServiceProcess, amount: bigint) => {
  const api = merchantClient(over(service), merchant)
  const payout = privateKeyToAccount(generatePrivateKey()).address
  const request = await readyRequest({ service: over(service), api, payer }, formatAmount(amount), payout)
  await local.mint(payer.address, amount)
  await local.pay(payer, request.address, amount)
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
      await local.chain.setAutomine(false)
      const recorded = await mineUntil(async () => (await settleRows(id))[0])
      first.child.kill("SIGKILL")
      await new Promise((r) => first!.child.once("exit", r))
      first = undefined
      // As if it had died before the broadcast: the node forgets every pending transaction.
      await local.chain.request({
        method: "anvil_dropAllTransactions",
        params: []
      } as never)
      await local.chain.setAutomine(true)

      second = await spawnService(env())
      await mineUntil(async () => ((await statusOf(id)) === "settled" ? true : undefined))
      expect(await local.balanceOf(payout)).toBe(4_000_000n)
      expect(await local.balanceOf(address)).toBe(0n)
      // The transfer that went through is the one recorded before the crash, never a new one.
      expect(await settleRows(id)).toEqual([{ tx_hash: recorded.tx_hash, state: "confirmed" }])
    } finally {
      await first?.stop("SIGKILL")
      await second?.stop()
      await local.chain.setAutomine(true)
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
      await local.chain.setAutomine(false)
      await local.chain.mine({ blocks: 1 })
      a.child.kill("SIGKILL")
      await new Promise((r) => a!.child.once("exit", r))
      a = undefined
      await local.chain.setAutomine(true)
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
        expect(await local.balanceOf(request.payout)).toBe(amounts[i])
        expect(await local.balanceOf(request.address)).toBe(0n)
        expect(await settleRows(request.id)).toHaveLength(1)
      }
      const report = (await (
        await fetch(`${b.baseUrl}/v1/reconciliation`, {
          headers: merchant.headers()
        })
      ).json()) as { totals: { requests_with_differences: number } }
      expect(report.totals.requests_with_differences).toBe(0)
    } finally {
      await a?.stop("SIGKILL")
      await b.stop()
    }
  }, 120_000)
})
