import { execFile } from "node:child_process"
import { promisify } from "node:util"
import type pg from "pg"
import type { Address } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import type { MerchantClient } from "../../support/Api"
import { type ChainService, startChainService } from "../../support/ChainService"
import type { Merchant } from "../../support/Merchant"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest as readyRequestOver } from "../../support/Payer"
import type { RunningService } from "../../support/Service"

let local: LocalChain
let running: ChainService
let service: RunningService
let api: MerchantClient
let merchant: Merchant
let db: pg.Client

beforeAll(async () => {
  // Blocks every 0.2 s and `finalized` two blocks behind `latest`, so the wait for finality is real.
  local = await startLocalChain({ blockTime: 0.2 })
  running = await startChainService(local)
  ;({ service, merchant, api, db } = running)
}, 60_000)
afterAll(async () => {
  await running?.stop()
  await local?.node.stop()
})

/** The payer: a funded dev account, so it can pay gas for its own transfers. */
const payer = anvilDevAccount(2)

const pay = (to: Address, amount: bigint) => local.pay(payer, to, amount)

const readyRequest = (amount: string, payoutTo?: Address) =>
  readyRequestOver({ service, api, payer }, amount, payoutTo)

const waitForStatus = async (id: string, status: string, ms = 20_000) => {
  const until = Date.now() + ms
  let last: { status: string; received_base_units: string } | undefined
  while (Date.now() < until) {
    last = (
      await api.call<{ status: string; received_base_units: string }>("GET", `/v1/deposit-requests/${id}`)
    ).body
    if (last.status === status) return last
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`status stayed ${last?.status}`)
}

describe("the chain watcher", () => {
  it("counts finalized transfers to a deposit address: partial, then funded, once each", async () => {
    const { id, address } = await readyRequest("5.000000")
    await local.mint(payer.address, 10_000_000n)
    await pay(address, 2_000_000n)
    const partial = await waitForStatus(id, "partially_deposited")
    expect(partial.received_base_units).toBe("2000000")
    await pay(address, 3_000_000n)
    const funded = await waitForStatus(id, "deposited")
    expect(funded.received_base_units).toBe("5000000")
    const credits = await db.query(
      "select count(*)::int as n from chain_credits where deposit_request_id = $1",
      [id.slice(3)]
    )
    expect(credits.rows[0]?.n).toBe(2)
    const settle = await db.query<{ payload: { amount_base_units: string } }>(
      "select payload from outbox where deposit_request_id = $1 and topic = 'command.settle'",
      [id.slice(3)]
    )
    expect(settle.rows.map((r) => r.payload.amount_base_units)).toEqual(["5000000"])
    const events = await api.call<{ events: Array<{ type: string }> }>(
      "GET",
      `/v1/events?deposit_request_id=${id}`
    )
    expect(events.body.events.map((e) => e.type).sort()).toEqual([
      "deposit_request.deposited",
      "deposit_request.ready"
    ])
  })

  it("marks funds first arriving from a wallet other than the attested one as likely unsolicited", async () => {
    const { id, address } = await readyRequest("1.000000")
    await local.mint(address, 1_000_000n)
    await waitForStatus(id, "deposited")
    const view = await api.call<{ likely_unsolicited_at: string | null }>("GET", `/v1/deposit-requests/${id}`)
    expect(view.body.likely_unsolicited_at).toMatch(/Z$/)
    const events = await api.call<{ events: Array<{ type: string }> }>(
      "GET",
      `/v1/events?deposit_request_id=${id}`
    )
    expect(events.body.events.map((e) => e.type)).toContain("deposit_request.likely_unsolicited")
  })

  it("settles exactly the amount to the payout address and returns the overpayment to the payer", async () => {
    const balance = local.balanceOf
    // A payout address of its own, so settlements of the other tests' requests do not land in the balance.
    const payout = privateKeyToAccount(generatePrivateKey()).address
    const { id, address } = await readyRequest("4.000000", payout)
    await local.mint(payer.address, 10_000_000n)
    const payoutBefore = await balance(payout)
    const payerBefore = await balance(payer.address)
    await pay(address, 6_500_000n)
    await waitForStatus(id, "settled", 30_000)
    const until = Date.now() + 30_000
    let recovered: Array<{ reason: string; amount_base_units: string }> = []
    while (Date.now() < until && recovered.length === 0) {
      const events = await api.call<{
        events: Array<{ type: string; data: { recovery?: { reason: string; amount_base_units: string } } }>
      }>("GET", `/v1/events?deposit_request_id=${id}&type=deposit_request.recovered_funds`)
      recovered = events.body.events.flatMap((e) => (e.data.recovery ? [e.data.recovery] : []))
      if (recovered.length === 0) await new Promise((r) => setTimeout(r, 200))
    }
    expect(recovered).toEqual([
      expect.objectContaining({ reason: "overpayment", amount_base_units: "2500000" })
    ])
    expect((await balance(payout)) - payoutBefore).toBe(4_000_000n)
    expect((await balance(payer.address)) - payerBefore).toBe(-6_500_000n + 2_500_000n)
    expect(await balance(address)).toBe(0n)
    const view = await api.call<{ status: string; settlement: { transaction_hash: string } }>(
      "GET",
      `/v1/deposit-requests/${id}`
    )
    expect(view.body.status).toBe("settled")
    expect(view.body.settlement.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/)
    const transfers = await db.query(
      "select kind, state from transfers where deposit_request_id = $1 order by created_at",
      [id.slice(3)]
    )
    expect(transfers.rows).toEqual([
      { kind: "settle", state: "confirmed" },
      { kind: "return", state: "confirmed" }
    ])

    // The merchant reads the same story: one payment in, the settlement and the return out, to the base unit.
    const read = await api.call<{
      transfers: Array<{
        direction: string
        kind: string
        amount_base_units: string
        from: string
        to: string
        finality: string
        transaction_hash: string
      }>
      next_cursor: null
    }>("GET", `/v1/deposit-requests/${id}/transfers`)
    expect(read.status).toBe(200)
    expect(read.body.next_cursor).toBeNull()
    expect(
      read.body.transfers.map((t) => [t.direction, t.kind, t.amount_base_units, t.from, t.to, t.finality])
    ).toEqual([
      ["in", "payment", "6500000", payer.address, address, "finalized"],
      ["out", "settlement", "4000000", address, payout, "finalized"],
      ["out", "return", "2500000", address, payer.address, "finalized"]
    ])
    const sum = (direction: string) =>
      read.body.transfers
        .filter((t) => t.direction === direction)
        .reduce((total, t) => total + BigInt(t.amount_base_units), 0n)
    expect(sum("in") - sum("out")).toBe(0n)
    const ledger = await api.call<{
      recoveries: Array<{ id: string; reason: string; amount_base_units: string; transaction_hash: string }>
    }>("GET", `/v1/deposit-requests/${id}/recoveries`)
    expect(ledger.body.recoveries).toEqual([
      expect.objectContaining({ reason: "overpayment", amount_base_units: "2500000" })
    ])
    expect(ledger.body.recoveries[0]?.id).toMatch(/^rec_/)
    expect(ledger.body.recoveries[0]?.transaction_hash).toBe(
      read.body.transfers.find((t) => t.kind === "return")?.transaction_hash
    )
  })

  it("funds a sandbox address from the CLI faucet, and refuses in production", async () => {
    const to = privateKeyToAccount(generatePrivateKey()).address
    const env = {
      ...process.env,
      CHAIN_RPC_URL: local.node.rpcUrl,
      TOKEN_ADDRESS: local.token,
      DATABASE_URL: ""
    }
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        "src/cli.ts",
        "devnet",
        "fund",
        "--address",
        to.toLowerCase(),
        "--amount",
        "1.500000",
        "--json"
      ],
      { env }
    )
    expect(JSON.parse(stdout)).toMatchObject({ address: to, amount_base_units: "1500000" })
    expect(await local.balanceOf(to)).toBe(1_500_000n)
    const refused = promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "devnet", "fund", "--address", to, "--amount", "1.000000"],
      { env: { ...env, SERVICE_ENV: "production" } }
    )
    await expect(refused).rejects.toMatchObject({ stderr: expect.stringContaining("sandbox only") })
  })

  it("ignores transfers to addresses it does not watch", async () => {
    const stranger = privateKeyToAccount(generatePrivateKey()).address
    const before = (await db.query("select count(*)::int as n from chain_credits")).rows[0]?.n
    await local.mint(stranger, 1_000_000n)
    await new Promise((r) => setTimeout(r, 2500))
    expect((await db.query("select count(*)::int as n from chain_credits")).rows[0]?.n).toBe(before)
  })

  it("lets a sandbox merchant try the money paths from the CLI: partial, exact, then a late transfer returned", async () => {
    const payout = privateKeyToAccount(generatePrivateKey()).address
    const { id, address } = await readyRequest("2.000000", payout)
    const pay = async (mode: string) =>
      JSON.parse(
        (
          await promisify(execFile)(
            process.execPath,
            ["--import", "tsx", "src/cli.ts", "devnet", "pay", "--request", id, "--mode", mode, "--json"],
            {
              env: {
                ...process.env,
                CHAIN_RPC_URL: local.node.rpcUrl,
                TOKEN_ADDRESS: local.token,
                DATABASE_URL: service.databaseUrl
              }
            }
          )
        ).stdout
      ) as { from: string; to: string; amount_base_units: string }
    const partial = await pay("partial")
    expect(partial).toMatchObject({ from: payer.address, to: address, amount_base_units: "1000000" })
    expect((await waitForStatus(id, "partially_deposited")).received_base_units).toBe("1000000")
    expect((await pay("exact")).amount_base_units).toBe("1000000")
    await waitForStatus(id, "settled", 30_000)
    expect((await pay("late")).amount_base_units).toBe("2000000")
    const until = Date.now() + 30_000
    let late: Array<{ reason: string; amount_base_units: string }> = []
    while (Date.now() < until && late.length === 0) {
      late = (
        await api.call<{ recoveries: Array<{ reason: string; amount_base_units: string }> }>(
          "GET",
          `/v1/deposit-requests/${id}/recoveries`
        )
      ).body.recoveries.filter((r) => r.reason === "late_transfer")
      if (late.length === 0) await new Promise((r) => setTimeout(r, 200))
    }
    expect(late).toEqual([expect.objectContaining({ amount_base_units: "2000000" })])
    expect(await local.balanceOf(payout)).toBe(2_000_000n)
  })

  it("reconciles every request of the account to the base unit after the flows, and names a difference", async () => {
    type Report = {
      requests: Array<{
        deposit_request_id: string
        settled_base_units: string
        returned_base_units: string
        chain_balance_base_units: string | null
        differences: Array<{ rule: string; difference_base_units: string }>
      }>
      totals: {
        credited_base_units: string
        settled_base_units: string
        returned_base_units: string
        held_base_units: string
        requests_with_differences: number
      }
    }
    // Settlements of the earlier flows may still be finalizing: the books balance once they are final.
    const until = Date.now() + 30_000
    let report = (await api.call<Report>("GET", "/v1/reconciliation")).body
    while (Date.now() < until && report.totals.requests_with_differences > 0) {
      await new Promise((r) => setTimeout(r, 250))
      report = (await api.call<Report>("GET", "/v1/reconciliation")).body
    }
    expect(report.requests.filter((r) => r.differences.length > 0)).toEqual([])
    expect(report.requests.some((r) => r.settled_base_units !== "0" && r.returned_base_units !== "0")).toBe(
      true
    )
    expect(
      report.requests.every((r) => r.chain_balance_base_units !== null || r.settled_base_units === "0")
    ).toBe(true)
    const t = report.totals
    expect(BigInt(t.credited_base_units)).toBe(
      BigInt(t.settled_base_units) + BigInt(t.returned_base_units) + BigInt(t.held_base_units)
    )
    const cli = (env: Record<string, string | undefined>) =>
      promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "src/cli.ts", "reconcile", "--account", merchant.accountId, "--json"],
        {
          env: {
            ...process.env,
            CHAIN_RPC_URL: local.node.rpcUrl,
            TOKEN_ADDRESS: local.token,
            DATABASE_URL: service.databaseUrl,
            ...env
          }
        }
      )
    const fromCli = JSON.parse((await cli({})).stdout) as Report
    expect(fromCli.totals).toEqual(report.totals)

    // A return the ledger does not know about (1 base unit) is named, by rule and amount, and fails the command.
    const settledOne = report.requests.find((r) => r.returned_base_units !== "0")!
    await db.query(
      `insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce, tx_hash, raw_tx, state, created_at)
       values ('reconcile-probe', $1, 'return', $2, 1, 0, $3, '0x', 'confirmed', now())`,
      [settledOne.deposit_request_id.slice(3), payer.address, `0x${"ab".repeat(32)}`]
    )
    try {
      const off = (await api.call<Report>("GET", "/v1/reconciliation")).body.requests.find(
        (r) => r.deposit_request_id === settledOne.deposit_request_id
      )
      expect(off?.differences).toEqual(
        expect.arrayContaining([
          { rule: "recoveries", difference_base_units: "-1" },
          { rule: "chain_balance", difference_base_units: "1" }
        ])
      )
      await expect(cli({})).rejects.toMatchObject({ code: 1 })
    } finally {
      await db.query("delete from transfers where command_id = 'reconcile-probe'")
    }
  })
})
