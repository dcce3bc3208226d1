import { randomUUID } from "node:crypto"
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { type ChainService, startChainService } from "../../support/ChainService"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"

/**
 * `GET /v1/reconciliation` as a paged report (issue 50, item 2): totals and differences come first from the books
 * kept beside the ledger, request rows by keyset page. On the embedded chain: a settlement and an overpayment
 * reconcile to zero, a difference written into the ledger shows on the first answer whatever page its request is
 * on, and a walk of the pages lists each request once. Bulk rows: a clean account's totals come from the kept sums.
 */
interface Reconciled {
  readonly deposit_request_id: string
  readonly status: string
  readonly credited_base_units: string
  readonly settled_base_units: string
  readonly returned_base_units: string
  readonly recovered_base_units: string
  readonly held_base_units: string
  readonly chain_balance_base_units: string | null
  readonly differences: ReadonlyArray<{ readonly rule: string; readonly difference_base_units: string }>
}
interface Report {
  readonly totals: {
    readonly credited_base_units: string
    readonly settled_base_units: string
    readonly returned_base_units: string
    readonly recovered_base_units: string
    readonly pending_base_units: string
    readonly held_base_units: string
    readonly requests_with_differences: number
  }
  readonly differences: ReadonlyArray<Reconciled>
  readonly differences_complete: boolean
  readonly requests: ReadonlyArray<Reconciled>
  readonly next_cursor: string | null
}

let local: LocalChain
let running: ChainService
let mining: ReturnType<typeof setInterval> | undefined

const report = async (query = "") => {
  const answer = await running.api.call<Report>("GET", `/v1/reconciliation${query}`)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

/** Every page of the report, `limit` rows at a time. */
const walk = async (limit: number, range = "") => {
  const rows: Array<Reconciled> = []
  let cursor: string | null = null
  for (;;) {
    const page: Report = await report(
      `?limit=${limit}${range}${cursor === null ? "" : `&starting_after=${cursor}`}`
    )
    rows.push(...page.requests)
    expect(page.requests.length).toBeLessThanOrEqual(limit)
    cursor = page.next_cursor
    if (cursor === null) return rows
  }
}

/** Pays `units` into a fresh request for `amount` and waits until it is settled and any excess returned. */
const pay = async (payerIndex: number, amount: bigint, units: bigint) => {
  const payer = anvilDevAccount(payerIndex)
  const decimal = `${amount / 1_000_000n}.${(amount % 1_000_000n).toString().padStart(6, "0")}`
  const paid = await readyRequest(
    { service: running.service, api: running.api, payer },
    decimal,
    privateKeyToAccount(generatePrivateKey()).address
  )
  await local.mint(payer.address, units)
  await local.pay(payer, paid.address, units)
  for (let i = 0; i < 300; i++) {
    const page = await report()
    const row = (await walk(100)).find((r) => r.deposit_request_id === paid.id)
    if (
      row?.status === "settled" &&
      BigInt(row.settled_base_units) + BigInt(row.recovered_base_units) === units &&
      page.totals.pending_base_units === "0" &&
      row.chain_balance_base_units === "0"
    )
      return paid.id
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${paid.id} did not settle`)
}

const ids: Array<string> = []

beforeAll(async () => {
  local = await startLocalChain()
  running = await startChainService(local, { mineWhileWaiting: true })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  ids.push(await pay(5, 1_000_000n, 1_000_000n))
  // An overpayment: the amount settles, the excess goes back as a recovery.
  ids.push(await pay(6, 2_000_000n, 2_500_000n))
  // Requests nobody paid, between and after.
  const refs = await running.api.setup()
  for (let i = 0; i < 3; i++) {
    const made = await running.api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
      { "idempotency-key": randomUUID() }
    )
    ids.push(made.body.id)
  }
}, 180_000)

afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await running?.stop()
  await local?.node.stop()
})

describe("GET /v1/reconciliation, paged", () => {
  it("answers the totals of a settlement and an overpayment at zero differences", async () => {
    const first = await report("?limit=1")
    expect(first.totals).toEqual({
      credited_base_units: "3500000",
      settled_base_units: "3000000",
      returned_base_units: "500000",
      recovered_base_units: "500000",
      pending_base_units: "0",
      held_base_units: "0",
      requests_with_differences: 0
    })
    expect(first.differences).toEqual([])
    expect(first.differences_complete).toBe(true)
    expect(first.requests).toHaveLength(1)
    expect(first.next_cursor).toBe(first.requests[0]?.deposit_request_id)
  })

  it("walks every request once, oldest first, by page of any size", async () => {
    for (const limit of [1, 2, 100]) {
      const rows = await walk(limit)
      expect(rows.map((r) => r.deposit_request_id)).toEqual(ids)
      expect(rows.every((r) => r.differences.length === 0)).toBe(true)
    }
    const bad = await running.api.call<{ error: { code: string; param?: string } }>(
      "GET",
      `/v1/reconciliation?starting_after=dr_${randomUUID()}`
    )
    expect(bad.status).toBe(404)
    expect(bad.body.error.code).toBe("deposit_request_not_found")
  })

  it("shows a difference in the ledger first, on a page that does not hold its request, until it is gone", async () => {
    // A confirmed return the recovery ledger does not have, on the first request (the last page's is another).
    const target = ids[0]!
    await running.db.query(
      `insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce, tx_hash,
         raw_tx, state, created_at)
       values ('reconcile-report-probe', $1, 'return', $2, 7, 0, $3, '0x', 'confirmed', now())`,
      [target.slice(3), privateKeyToAccount(generatePrivateKey()).address, `0x${"ab".repeat(32)}`]
    )
    const last = await report(`?limit=1&starting_after=${ids.at(-2)}`)
    expect(last.requests.map((r) => r.deposit_request_id)).toEqual([ids.at(-1)])
    expect(last.totals.requests_with_differences).toBe(1)
    expect(last.totals.returned_base_units).toBe("500007")
    expect(last.differences.map((r) => r.deposit_request_id)).toEqual([target])
    expect(last.differences[0]?.differences).toEqual(
      expect.arrayContaining([
        { rule: "recoveries", difference_base_units: "-7" },
        { rule: "chain_balance", difference_base_units: "7" }
      ])
    )
    await running.db.query("delete from transfers where command_id = 'reconcile-report-probe'")
    const clean = await report("?limit=1")
    expect(clean.totals.requests_with_differences).toBe(0)
    expect(clean.totals.returned_base_units).toBe("500000")
    expect(clean.differences).toEqual([])
  })

  it("filters by creation time: totals and rows of the range only, edges inside an hour included", async () => {
    const rows = await walk(100)
    const created = await Promise.all(
      ids.map(async (id) => {
        const r = await running.db.query<{ created_at: Date }>(
          "select created_at from deposit_requests where id = $1",
          [id.slice(3)]
        )
        return r.rows[0]!.created_at
      })
    )
    // From the second request on: the overpaid one and the unpaid ones.
    const from = created[1]!.toISOString().replace(/\.\d+Z$/, "Z")
    const ranged = await report(`?created_from=${from}`)
    expect(ranged.totals.settled_base_units).toBe("2000000")
    expect(ranged.totals.credited_base_units).toBe("2500000")
    const inRange = await walk(2, `&created_from=${from}`)
    expect(inRange.map((r) => r.deposit_request_id)).toEqual(
      rows.filter((_, i) => created[i]! >= new Date(from)).map((r) => r.deposit_request_id)
    )
    const before = await report(`?created_to=${from}`)
    expect(before.totals.settled_base_units).toBe("1000000")
  })

  it("answers a clean account's totals from the kept sums, however many requests it has", async () => {
    const n = 20_000
    const account = running.merchant.accountId.slice(5)
    // Bulk rows cloned from a settled request, each with a confirmed settlement of its amount, spread over days.
    await running.db.query(
      `with source as (select * from deposit_requests where id = $1),
       made as (
         insert into deposit_requests (id, account_id, status, version, machine_version, snapshot, amount_base_units,
           heading, reference, metadata, issuer_id, payout_address_id, payer_policy_mode, expires_at, created_at,
           updated_at)
         select gen_random_uuid(), s.account_id, 'settled', 1, s.machine_version, s.snapshot, 1000000, '', 'bulk-' || g,
           '{}', s.issuer_id, s.payout_address_id, s.payer_policy_mode, s.expires_at,
           now() - interval '40 days' + g * interval '1 minute', now()
         from source s, generate_series(1, $2::int) g
         returning id, amount_base_units
       )
       insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce, tx_hash,
         raw_tx, state, created_at, confirmed_at)
       select 'bulk-' || id, id, 'settle', '0x0', amount_base_units, 0, '0x' || md5(id::text) || md5(id::text || 'x'),
         '0x', 'confirmed', now(), now() from made`,
      [ids[0]!.slice(3), n]
    )
    const started = performance.now()
    const first = await report("?limit=10")
    const firstMs = performance.now() - started
    expect(BigInt(first.totals.settled_base_units)).toBe(3_000_000n + BigInt(n) * 1_000_000n)
    expect(first.totals.requests_with_differences).toBe(0)
    expect(first.differences).toEqual([])
    // Folded once; from then on an answer reads the hourly sums, not the rows.
    const times: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const t = performance.now()
      const again = await report("?limit=10")
      times.push(performance.now() - t)
      expect(again.totals).toEqual(first.totals)
    }
    const median = times.sort((a, b) => a - b)[2]!
    const plan = await running.db.query<{ "QUERY PLAN": string }>(
      `explain select sum(settled_base_units) from reconciliation_totals where account_id = $1`,
      [account]
    )
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).not.toMatch(/Seq Scan on reconciliation_books/)
    console.log(
      `reconciliation over ${n} bulk requests: first ${firstMs.toFixed(0)} ms (folds), then median ${median.toFixed(1)} ms`
    )
    expect(median).toBeLessThan(250)
  }, 120_000)
})
