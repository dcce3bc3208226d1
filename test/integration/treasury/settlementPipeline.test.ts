import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redacted } from "effect"
import pg from "pg"
import { type Address, encodeFunctionData, getAddress, type Hex, toHex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { fiatTokenAbi as abi } from "../../../infra/contracts/FiatToken"
import { makeKeyVault, SANDBOX_DEPOSIT_MNEMONIC } from "../../../services/chain/KeyVault"
import { TRANSFER_TOPIC } from "../../../services/chain/TransferLog"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { chainServiceEnv, type ServiceProcess, spawnService } from "../../support/Process"
import { seedReadyRequests } from "../../support/seedReadyRequests"

/**
 * Issue 19: the treasury's pipeline killed with transactions in flight. A burst of requests is paid in one block;
 * the service signs and records every settlement and broadcasts them; blocks are kept small, so when the process
 * is SIGKILLed some transfers are mined (not final), some wait in the node's pool, and some the node is then made
 * to lose. After a restart every payout is made exactly once (one Transfer log to each payout address, the exact
 * amount), every overpayment is returned once, and every request ends settled, with the transactions recorded
 * before the crash.
 */
const N = 30
const AMOUNT = 1_000_000n
const EXCESS = 100_000n
const overpaid = (i: number) => i % 3 === 0
/** A block this small holds about four transfers with authorization. */
const SMALL_BLOCK_GAS = 350_000

let local: LocalChain
let db: { url: string; drop: () => Promise<void> }
let dataDir: string
let client: pg.Client
const payer = anvilDevAccount(5)

const env = () => ({
  ...chainServiceEnv({
    databaseUrl: db.url,
    rpcUrl: local.node.rpcUrl,
    token: local.token,
    dataDir
  }),
  // What is asserted is the re-send of the recorded bytes; on a loaded machine the restart can outlast the default
  // replacement age, and a replacement (a new hash at the same nonce) is what chainFailures tests.
  TRANSFER_REPLACE_AFTER_MS: "600000"
})

beforeAll(async () => {
  local = await startLocalChain()
  db = await createTestDatabase()
  dataDir = mkdtempSync(join(tmpdir(), "deposits-pipeline-"))
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
}, 60_000)
afterAll(async () => {
  await client?.end()
  await local?.node.stop()
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

const rpc = <A>(method: string, params: ReadonlyArray<unknown> = []) =>
  local.chain.request({ method, params } as never) as Promise<A>

const count = async (query: string) => (await client.query<{ n: number }>(query)).rows[0]!.n

describe("the settlement pipeline killed with transactions in flight", () => {
  it("after a restart makes every payout and every return exactly once, and every request ends settled", async () => {
    let first: ServiceProcess | undefined = await spawnService(env())
    let second: ServiceProcess | undefined
    try {
      const merchant = await createMerchant(db.url)
      const vault = makeKeyVault(Redacted.make(SANDBOX_DEPOSIT_MNEMONIC))
      const deposits = Array.from({ length: N }, (_, i) => vault.depositAddress(i))
      const payouts = Array.from({ length: N }, () =>
        getAddress(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString("hex")}`)
      )
      await seedReadyRequests(db.url, {
        accountId: merchant.accountId.slice(5),
        wallet: payer.address,
        deposits,
        payouts,
        amount: AMOUNT
      })
      // The watcher starts at the first final block it sees: the payments must come after it.
      await local.mineUntil(async () =>
        (await client.query("select 1 from chain_cursors")).rowCount ? true : undefined
      )
      await local.mint(payer.address, (AMOUNT + EXCESS) * BigInt(N))

      // Every payment in one block; from here nothing is mined unless the test mines.
      await local.chain.setAutomine(false)
      let nonce = await local.chain.getTransactionCount({
        address: payer.address,
        blockTag: "pending"
      })
      for (const [i, to] of deposits.entries()) {
        await local.chain.sendTransaction({
          account: payer,
          chain: null,
          to: local.token,
          nonce: nonce++,
          gas: 100_000n,
          data: encodeFunctionData({
            abi,
            functionName: "transfer",
            args: [to, overpaid(i) ? AMOUNT + EXCESS : AMOUNT]
          })
        })
      }
      await local.chain.mine({ blocks: 1 })
      const paidBlock = await local.chain.getBlock()
      expect(paidBlock.transactions).toHaveLength(N)
      // Final (latest − 2): the watcher credits them all, the treasury signs, records and broadcasts.
      await local.chain.mine({ blocks: 2 })
      // Nothing is mined while waiting: every settlement recorded and broadcast, none mined yet.
      const waitForPool = async () => {
        const until = Date.now() + 60_000
        while (Date.now() < until) {
          const pool = await rpc<{ pending: Hex }>("txpool_status")
          if (Number(pool.pending) >= N) return
          await new Promise((r) => setTimeout(r, 100))
        }
        throw new Error("the settlements never all reached the node")
      }
      await waitForPool()
      expect(await count("select count(*)::int as n from transfers")).toBe(N)
      // A small block: it holds a few of the transfers; the rest stay in the pool.
      await rpc("evm_setBlockGasLimit", [toHex(SMALL_BLOCK_GAS)])
      await local.chain.mine({ blocks: 1 })
      const before = (
        await client.query<{ command_id: string; tx_hash: string }>(
          "select command_id, tx_hash from transfers where kind = 'settle'"
        )
      ).rows
      expect(before).toHaveLength(N)

      first.child.kill("SIGKILL")
      await new Promise((r) => first!.child.once("exit", r))
      first = undefined

      // In flight at the crash: some mined (not final), most in the pool; the node now loses half of those.
      const mined = (await local.chain.getBlock()).transactions.length
      expect(mined).toBeGreaterThan(0)
      expect(mined).toBeLessThan(N)
      const pool = await rpc<{
        pending: Record<string, Record<string, { hash: Hex }>>
      }>("txpool_content")
      const pending = Object.values(pool.pending).flatMap((byNonce) => Object.values(byNonce))
      expect(pending.length).toBe(N - mined)
      for (const tx of pending.filter((_, i) => i % 2 === 0)) await rpc("anvil_dropTransaction", [tx.hash])

      await rpc("evm_setBlockGasLimit", [toHex(30_000_000)])
      await local.chain.setAutomine(true)
      second = await spawnService(env())
      const returns = deposits.filter((_, i) => overpaid(i)).length
      await local.mineUntil(
        async () =>
          (await count("select count(*)::int as n from deposit_requests where status = 'settled'")) === N &&
          (await count(
            "select count(*)::int as n from transfers where kind = 'return' and state = 'confirmed'"
          )) === returns
            ? true
            : undefined,
        90_000
      )

      // Exactly once, on chain: one Transfer out of the deposit addresses to each payout, the returns to the payer.
      const logs = await rpc<Array<{ topics: Array<Hex> }>>("eth_getLogs", [
        {
          address: local.token,
          fromBlock: toHex(paidBlock.number + 1n),
          toBlock: "latest",
          topics: [TRANSFER_TOPIC]
        }
      ])
      const fromDeposits = new Set(deposits.map((d) => d.toLowerCase()))
      const out = logs.filter((l) => fromDeposits.has(`0x${l.topics[1]!.slice(26)}`))
      const to = (l: { topics: Array<Hex> }) => `0x${l.topics[2]!.slice(26)}` as Address
      expect(out).toHaveLength(N + returns)
      for (const p of payouts) {
        expect(out.filter((l) => to(l) === p.toLowerCase())).toHaveLength(1)
        expect(await local.balanceOf(p)).toBe(AMOUNT)
      }
      expect(out.filter((l) => to(l) === payer.address.toLowerCase())).toHaveLength(returns)
      for (const d of deposits) expect(await local.balanceOf(d)).toBe(0n)
      // The settlements that went through are the transactions recorded before the crash, never new ones.
      const after = (
        await client.query<{
          command_id: string
          tx_hash: string
          state: string
        }>("select command_id, tx_hash, state from transfers where kind = 'settle'")
      ).rows
      expect(new Map(after.map((t) => [t.command_id, t.tx_hash]))).toEqual(
        new Map(before.map((t) => [t.command_id, t.tx_hash]))
      )
      expect(after.every((t) => t.state === "confirmed")).toBe(true)
    } finally {
      await first?.stop("SIGKILL")
      await second?.stop()
      await local.chain.setAutomine(true)
    }
  }, 240_000)
})
