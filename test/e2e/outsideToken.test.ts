import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { type Address, type Hash, parseEther } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilHandle, anvilDevAccount, DEV_ACCOUNT, startAnvil } from "../../infra/chain/Anvil"
import { type DeployedUsdc, deployUsdc, mintUsdc } from "../../infra/chain/deployUsdc"
import { fiatTokenAbi } from "../../infra/contracts/FiatToken"
import { formatAmount } from "../../services/domain/Amount"
import { type MerchantClient, merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { localChainClients } from "../support/LocalChain"
import { createMerchant } from "../support/Merchant"
import { readyRequest } from "../support/Payer"
import { chainServiceEnv, type ServiceProcess, spawnService } from "../support/Process"
import { httpTarget } from "../support/Service"

/**
 * The service pointed at a chain it did not start and a FiatToken v2.2 it did not deploy: the token's roles and its
 * proxy's admin are keys nobody in the sandbox knows, its name (and so its EIP-712 domain) is not the sandbox's
 * "USDC", and the treasury pays gas from a key of its own. An exact and an overpaid request settle; the overpayment
 * goes back to the payer; nothing stays on the deposit addresses and no transaction of the treasury's reverts.
 */

/** A fresh key, given gas by the node (not a transaction, so it leaves no trace in any dev account's nonce). */
const fundedKey = async (chain: ReturnType<typeof localChainClients>["chain"]) => {
  const key = generatePrivateKey()
  const account = privateKeyToAccount(key)
  await chain.setBalance({ address: account.address, value: parseEther("100") })
  return { key, account }
}

const TOKEN_NAME = "USD Coin"

let node: AnvilHandle
let database: { url: string; drop: () => Promise<void> }
let dataDir: string

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "deposits-outside-token-"))
  // Interval mining (1 s) that also mines each transaction at once, as a public chain's node would look to the
  // service: finality (finalized = latest − 2) advances by itself, so the test never mines.
  ;[node, database] = await Promise.all([
    startAnvil({ blockTime: 1, mixedMining: true, slotsInAnEpoch: 1 }),
    createTestDatabase()
  ])
}, 120_000)
afterAll(async () => {
  await Promise.all([node?.stop(), database?.drop()])
  rmSync(dataDir, { recursive: true, force: true })
})

interface View {
  readonly status: string
}
interface Recoveries {
  readonly recoveries: ReadonlyArray<{
    readonly amount_base_units: string
    readonly transaction_hash: string
  }>
}

describe("a service on a chain and a FiatToken it did not deploy", () => {
  it("settles exact and overpaid requests and returns the rest", async () => {
    const started = Date.now()
    const { chain } = localChainClients(node, "0x0000000000000000000000000000000000000000")
    const roles = await fundedKey(chain)
    const proxyAdmin = await fundedKey(chain)
    const treasury = await fundedKey(chain)
    const deployed: DeployedUsdc = await deployUsdc(chain, {
      name: TOKEN_NAME,
      symbol: "USDC",
      roles: roles.account,
      proxyAdmin: proxyAdmin.account
    })
    const token = deployed.address
    const { balanceOf, pay } = localChainClients(node, token)
    expect(await chain.readContract({ address: token, abi: fiatTokenAbi, functionName: "name" })).toBe(
      TOKEN_NAME
    )

    const db = new pg.Client({ connectionString: database.url })
    let service: ServiceProcess | undefined
    try {
      service = await spawnService({
        ...chainServiceEnv({ databaseUrl: database.url, rpcUrl: node.rpcUrl, token, dataDir }),
        SERVICE_ENV: "sandbox",
        TREASURY_PRIVATE_KEY: treasury.key
      })
      await db.connect()
      const merchant = await createMerchant(database.url)
      const running = httpTarget(service.baseUrl)
      const api: MerchantClient = merchantClient(running, merchant)
      const payer = anvilDevAccount(6)

      const exactPayout = privateKeyToAccount(generatePrivateKey()).address
      const overPayout = privateKeyToAccount(generatePrivateKey()).address
      const exact = await readyRequest(
        { service: running, api, payer },
        formatAmount(3_000_000n),
        exactPayout
      )
      const over = await readyRequest({ service: running, api, payer }, formatAmount(2_000_000n), overPayout)
      // The faucet is the token's own minter: the roles' key, not the sandbox's dev account 0.
      await mintUsdc(chain, { token, to: payer.address, amount: 5_750_000n, minter: roles.account })
      await pay(payer, exact.address, 3_000_000n)
      await pay(payer, over.address, 2_750_000n)

      const statusOf = async (id: string) =>
        (await api.call<View>("GET", `/v1/deposit-requests/${id}`)).body.status
      const recoveriesOf = async (id: string) =>
        (await api.call<Recoveries>("GET", `/v1/deposit-requests/${id}/recoveries`)).body.recoveries
      const until = Date.now() + 90_000
      for (;;) {
        const done =
          (await statusOf(exact.id)) === "settled" &&
          (await statusOf(over.id)) === "settled" &&
          (await recoveriesOf(over.id)).length === 1
        if (done) break
        if (Date.now() > until) {
          const rows = await db.query("select deposit_request_id, kind, state, tx_hash from transfers")
          throw new Error(
            `not settled within 90 s: ${JSON.stringify({
              exact: await statusOf(exact.id),
              over: await statusOf(over.id),
              transfers: rows.rows
            })}\n${service.output().slice(-6_000)}`
          )
        }
        await new Promise((r) => setTimeout(r, 250))
      }

      // Each payout address got exactly its amount, the payer its excess back, the deposit addresses are empty.
      expect(await balanceOf(exactPayout)).toBe(3_000_000n)
      expect(await balanceOf(overPayout)).toBe(2_000_000n)
      expect(await balanceOf(payer.address)).toBe(750_000n)
      expect(await balanceOf(exact.address as Address)).toBe(0n)
      expect(await balanceOf(over.address as Address)).toBe(0n)

      // Three transfers, all confirmed: two settlements and one return; the recovery names the return's transaction.
      const transfers = (
        await db.query<{
          kind: string
          to_address: string
          amount_base_units: string
          tx_hash: Hash
          state: string
        }>(
          "select kind, to_address, amount_base_units::text, tx_hash, state from transfers order by kind, amount_base_units"
        )
      ).rows
      expect(
        transfers.map((t) => [t.kind, t.to_address.toLowerCase(), t.amount_base_units, t.state])
      ).toEqual([
        ["return", payer.address.toLowerCase(), "750000", "confirmed"],
        ["settle", overPayout.toLowerCase(), "2000000", "confirmed"],
        ["settle", exactPayout.toLowerCase(), "3000000", "confirmed"]
      ])
      const recovery = (await recoveriesOf(over.id))[0]!
      expect(recovery.amount_base_units).toBe("750000")
      expect(recovery.transaction_hash.toLowerCase()).toBe(transfers[0]!.tx_hash.toLowerCase())
      expect(await recoveriesOf(exact.id)).toEqual([])

      // No transaction of the treasury's reverted: every one it sent (its nonce) is a recorded transfer that succeeded,
      // sent from its own key.
      expect(await chain.getTransactionCount({ address: treasury.account.address })).toBe(transfers.length)
      for (const t of transfers) {
        const receipt = await chain.getTransactionReceipt({ hash: t.tx_hash })
        expect(receipt.status).toBe("success")
        expect(receipt.from.toLowerCase()).toBe(treasury.account.address.toLowerCase())
      }
      // The sandbox's own accounts did nothing on this chain: no treasury gas from dev account 1, no deployment or
      // minting by dev accounts 0 and 8.
      for (const index of [DEV_ACCOUNT.faucetOwner, DEV_ACCOUNT.treasury, DEV_ACCOUNT.proxyAdmin])
        expect(await chain.getTransactionCount({ address: anvilDevAccount(index).address })).toBe(0)
      process.stdout.write(`outside token: settled and returned in ${Date.now() - started} ms\n`)
    } finally {
      await db.end().catch(() => undefined)
      await service?.stop()
    }
  }, 120_000)
})
