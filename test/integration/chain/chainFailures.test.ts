import { execFile } from "node:child_process"
import { promisify } from "node:util"
import type pg from "pg"
import { type Address, encodeAbiParameters, keccak256, numberToHex, parseTransaction } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { formatAmount } from "../../../services/domain/Amount"
import type { MerchantClient } from "../../support/Api"
import { type ChainService, startChainService } from "../../support/ChainService"
import type { Merchant } from "../../support/Merchant"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import type { RunningService } from "../../support/Service"

/**
 * Issue 6: what the chain does wrong, on a local node the test drives block by block. A settlement that reverts
 * pauses its request (`needs_attention`) until an operator resumes it; a stuck settlement is replaced at the same
 * nonce; a payment reorganised away after finality pauses its request (`deep_reorg`); one reorganised away before
 * finality never counts.
 */
let local: LocalChain
let running: ChainService
let service: RunningService
let merchant: Merchant
let api: MerchantClient
let db: pg.Client

const payer = anvilDevAccount(4)

beforeAll(async () => {
  // Automine and `finalized` two blocks behind: finality advances only as the test mines.
  local = await startLocalChain()
  // A broadcast transfer with no receipt after 1.5 s counts as stuck here (60 s by default).
  running = await startChainService(local, {
    config: { transferReplaceAfterMs: 1_500 },
    mineWhileWaiting: true
  })
  ;({ service, merchant, api, db } = running)
}, 60_000)
afterAll(async () => {
  await running?.stop()
  await local?.node.stop()
})

/** Sets a token balance in storage (`balanceOf` is slot 1): no Transfer event, so the watcher sees nothing. */
const setBalance = async (who: Address, amount: bigint) => {
  const slot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [who, 1n]))
  await local.chain.setStorageAt({
    address: local.token,
    index: slot,
    value: numberToHex(amount, { size: 32 })
  })
  expect(await local.balanceOf(who)).toBe(amount)
}

const view = (id: string) =>
  api.call<{ status: string; attention: { code: string; resolution: string } | null }>(
    "GET",
    `/v1/deposit-requests/${id}`
  )

/**
 * A ready request paid exactly to a fresh payout address; then automine goes off, so every
 * transaction waits in the mempool until the test mines, and blocks are mined until the settlement is signed.
 */
const paidWithSettlementHeld = async (baseUnits: bigint) => {
  const payout = privateKeyToAccount(generatePrivateKey()).address
  const { id, address } = await readyRequest({ service, api, payer }, formatAmount(baseUnits), payout)
  await local.mint(payer.address, baseUnits)
  await local.pay(payer, address, baseUnits)
  await local.chain.setAutomine(false)
  const settlement = await local.mineUntil(async () => {
    const rows = await db.query<{ tx_hash: `0x${string}`; raw_tx: `0x${string}` }>(
      "select tx_hash, raw_tx from transfers where deposit_request_id = $1 and kind = 'settle'",
      [id.slice(3)]
    )
    return rows.rows[0]
  })
  return { id, address, payout, settlement }
}

describe("a settlement that reverts", () => {
  it("pauses the request with needs_attention, and an operator's resume settles it exactly once", async () => {
    const { id, address, payout, settlement: signed } = await paidWithSettlementHeld(3_000_000n)
    // The settlement is broadcast, not mined: empty the address, then mine it into a revert.
    await new Promise((r) => setTimeout(r, 300))
    await setBalance(address, 0n)
    await local.chain.mine({ blocks: 1 })
    // (If the treasury already replaced it as stuck, whichever of its transactions was mined is the one.)
    const hashes = await db.query<{ tx_hash: `0x${string}`; replaced_tx_hashes: Array<`0x${string}`> }>(
      "select tx_hash, replaced_tx_hashes from transfers where deposit_request_id = $1 and kind = 'settle'",
      [id.slice(3)]
    )
    const row = hashes.rows[0]!
    const receipts = await Promise.all(
      [row.tx_hash, ...row.replaced_tx_hashes].map((hash) =>
        local.chain.getTransactionReceipt({ hash }).catch(() => undefined)
      )
    )
    expect(receipts.filter((r) => r !== undefined).map((r) => r!.status)).toEqual(["reverted"])

    const paused = await local.mineUntil(async () => {
      const res = await view(id)
      return res.body.status === "needs_attention" ? res.body : undefined
    })
    expect(paused.attention?.code).toBe("transfer_reverted")
    expect(paused.attention?.resolution).toMatch(/resume/)
    const events = await api.call<{ events: Array<{ type: string }> }>(
      "GET",
      `/v1/events?deposit_request_id=${id}`
    )
    expect(events.body.events.map((e) => e.type)).toContain("deposit_request.needs_attention")

    // Only a dashboard session resumes; a request that does not need attention cannot be resumed.
    const byKey = await api.call<{ error: { code: string } }>("POST", `/v1/deposit-requests/${id}/resume`)
    expect(byKey.status).toBe(401)
    expect(byKey.body.error.code).toBe("identity_unauthorized")
    const resume = () =>
      service.request(`/v1/deposit-requests/${id}/resume`, {
        method: "POST",
        headers: merchant.headers("session")
      })

    // The funds are back (as an operator would make sure); resume.
    await setBalance(address, 3_000_000n)
    await local.chain.setAutomine(true)
    const resumed = await resume()
    expect(resumed.status).toBe(200)
    expect(((await resumed.json()) as { status: string }).status).toBe("deposited")

    await local.mineUntil(async () => ((await view(id)).body.status === "settled" ? true : undefined))
    expect(await local.balanceOf(payout)).toBe(3_000_000n)
    expect(await local.balanceOf(address)).toBe(0n)
    const again = await resume()
    expect(again.status).toBe(409)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("invalid_state")

    // One settlement row, re-signed once: final now, with a new hash; the books balance.
    const transfers = await db.query<{ state: string; tx_hash: string }>(
      "select state, tx_hash from transfers where deposit_request_id = $1",
      [id.slice(3)]
    )
    expect(transfers.rows).toHaveLength(1)
    expect(transfers.rows[0]?.state).toBe("confirmed")
    expect([signed.tx_hash, ...row.replaced_tx_hashes]).not.toContain(transfers.rows[0]?.tx_hash)
    const report = await local.mineUntil(async () => {
      const body = (
        await api.call<{ requests: Array<{ deposit_request_id: string; differences: Array<unknown> }> }>(
          "GET",
          "/v1/reconciliation"
        )
      ).body
      const mine = body.requests.find((r) => r.deposit_request_id === id)
      return mine !== undefined && mine.differences.length === 0 ? mine : undefined
    })
    expect(report.differences).toEqual([])
  })
})

describe("a settlement stuck below the chain's fees", () => {
  it("is replaced at the same nonce with higher fees, and only one of the two is ever mined", async () => {
    const { id, address, payout, settlement: first } = await paidWithSettlementHeld(2_000_000n)
    // Nothing is mined now: the treasury finds the transfer stuck and replaces it.
    const until = Date.now() + 15_000
    let replaced:
      | { tx_hash: `0x${string}`; raw_tx: `0x${string}`; replaced_tx_hashes: Array<string> }
      | undefined
    while (Date.now() < until && replaced === undefined) {
      const rows = await db.query<{
        tx_hash: `0x${string}`
        raw_tx: `0x${string}`
        replaced_tx_hashes: Array<string>
      }>(
        "select tx_hash, raw_tx, replaced_tx_hashes from transfers where deposit_request_id = $1 and kind = 'settle'",
        [id.slice(3)]
      )
      if (rows.rows[0] !== undefined && rows.rows[0].tx_hash !== first.tx_hash) replaced = rows.rows[0]
      else await new Promise((r) => setTimeout(r, 100))
    }
    expect(replaced?.replaced_tx_hashes).toEqual([first.tx_hash])
    const before = parseTransaction(first.raw_tx)
    const after = parseTransaction(replaced!.raw_tx)
    expect(after.nonce).toBe(before.nonce)
    expect(after.data).toBe(before.data)
    expect(after.maxFeePerGas! > before.maxFeePerGas! + before.maxFeePerGas! / 5n).toBe(true)

    // A block whose base fee only the replacement pays: the old transaction can never be mined with it.
    const baseFee = before.maxFeePerGas! + before.maxFeePerGas! / 10n
    expect(after.maxFeePerGas! > baseFee).toBe(true)
    await local.chain.setNextBlockBaseFeePerGas({ baseFeePerGas: baseFee })
    await local.chain.mine({ blocks: 1 })
    expect((await local.chain.getTransactionReceipt({ hash: replaced!.tx_hash })).status).toBe("success")
    await expect(local.chain.getTransactionReceipt({ hash: first.tx_hash })).rejects.toThrow()
    await local.chain.setAutomine(true)

    await local.mineUntil(async () => ((await view(id)).body.status === "settled" ? true : undefined))
    expect(await local.balanceOf(payout)).toBe(2_000_000n)
    expect(await local.balanceOf(address)).toBe(0n)
    const transfers = await api.call<{
      transfers: Array<{ kind: string; transaction_hash: string; finality: string }>
    }>("GET", `/v1/deposit-requests/${id}/transfers`)
    expect(transfers.body.transfers.filter((t) => t.kind === "settlement")).toEqual([
      expect.objectContaining({ transaction_hash: replaced!.tx_hash, finality: "finalized" })
    ])
  })
})

describe("a payment reorganised away after it was final", () => {
  it("pauses its request with needs_attention (deep_reorg), and reconciliation shows the missing funds", async () => {
    const { id, address } = await readyRequest({ service, api, payer }, "5.000000")
    await local.mint(payer.address, 2_000_000n)
    const receipt = await local.pay(payer, address, 2_000_000n)
    await local.mineUntil(async () =>
      (await view(id)).body.status === "partially_deposited" ? true : undefined
    )

    // Replace every block from the payment's on (deeper than finality), without the payment.
    const latest = await local.chain.getBlockNumber()
    const depth = Number(latest - receipt.blockNumber) + 1
    await local.chain.request({ method: "anvil_reorg", params: [depth, []] } as never)
    expect(await local.balanceOf(address)).toBe(0n)

    const paused = await local.mineUntil(async () => {
      const res = await view(id)
      return res.body.status === "needs_attention" ? res.body : undefined
    })
    expect(paused.attention?.code).toBe("deep_reorg")
    const report = (
      await api.call<{
        requests: Array<{
          deposit_request_id: string
          differences: Array<{ rule: string; difference_base_units: string }>
        }>
      }>("GET", "/v1/reconciliation")
    ).body.requests.find((r) => r.deposit_request_id === id)
    expect(report?.differences).toEqual([{ rule: "chain_balance", difference_base_units: "-2000000" }])
  })
})

describe("a payment reorganised away before it was final", () => {
  it("never counts, and a later payment still does", async () => {
    const { id, address } = await readyRequest({ service, api, payer }, "1.000000")
    await local.mint(payer.address, 2_000_000n)
    const snapshot = await local.chain.snapshot()
    await local.pay(payer, address, 1_000_000n)
    expect(await local.balanceOf(address)).toBe(1_000_000n)
    // Seen at `latest` only: finality lags two blocks and nothing else is mined, so the watcher does not take it.
    await new Promise((r) => setTimeout(r, 2500))
    await local.chain.revert({ id: snapshot })
    expect(await local.balanceOf(address)).toBe(0n)
    await local.chain.mine({ blocks: 5 })
    await new Promise((r) => setTimeout(r, 2500))
    const credits = await db.query("select 1 from chain_credits where deposit_request_id = $1", [id.slice(3)])
    expect(credits.rowCount).toBe(0)
    const after = (await view(id)).body as { status: string; received_base_units?: string }
    expect(after.status).toBe("ready")

    // The watcher carries on: a real payment counts.
    await local.pay(payer, address, 1_000_000n)
    await local.mineUntil(async () => ((await view(id)).body.status !== "ready" ? true : undefined))
    expect(
      (await db.query("select 1 from chain_credits where deposit_request_id = $1", [id.slice(3)])).rowCount
    ).toBe(1)
  })
})

describe("a treasury out of gas", () => {
  it("pauses the request (treasury_out_of_gas) until the treasury is funded and the request resumed", async () => {
    const treasury = anvilDevAccount(1).address
    const gas = await local.chain.getBalance({ address: treasury })
    const payout = privateKeyToAccount(generatePrivateKey()).address
    const { id, address } = await readyRequest({ service, api, payer }, "1.000000", payout)
    await local.mint(payer.address, 1_000_000n)
    // The sandbox command a merchant uses to see this path on `npm start`.
    const emptied = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "devnet", "treasury-gas", "--eth", "0", "--json"],
      {
        env: {
          ...process.env,
          CHAIN_RPC_URL: local.node.rpcUrl,
          TOKEN_ADDRESS: local.token,
          DATABASE_URL: service.databaseUrl
        }
      }
    )
    expect(JSON.parse(emptied.stdout)).toEqual({ treasury, balance_wei: "0" })
    expect(await local.chain.getBalance({ address: treasury })).toBe(0n)
    try {
      await local.pay(payer, address, 1_000_000n)
      const paused = await local.mineUntil(async () => {
        const res = await view(id)
        return res.body.status === "needs_attention" ? res.body : undefined
      })
      expect(paused.attention?.code).toBe("treasury_out_of_gas")
      expect(await local.balanceOf(payout)).toBe(0n)
    } finally {
      await local.chain.setBalance({ address: treasury, value: gas })
    }
    const resumed = await service.request(`/v1/deposit-requests/${id}/resume`, {
      method: "POST",
      headers: merchant.headers("session")
    })
    expect(resumed.status).toBe(200)
    await local.mineUntil(async () => ((await view(id)).body.status === "settled" ? true : undefined))
    expect(await local.balanceOf(payout)).toBe(1_000_000n)
    expect(await local.balanceOf(address)).toBe(0n)
  })
})
