import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Address } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { readyRequest as readyRequestOver } from "../../support/Payer"
import { ChainServiceFixture, chainServiceLayer } from "../../support/scopedChainService"

// Blocks every 0.2 s and `finalized` two blocks behind `latest`, so the wait for finality is real.
const ChainLive = chainServiceLayer({ blockTime: 0.2 })

/** The payer: a funded dev account, so it can pay gas for its own transfers. */
const payer = anvilDevAccount(2)

const pay = (to: Address, amount: bigint) =>
  Effect.flatMap(ChainServiceFixture, ({ local }) => Effect.promise(() => local.pay(payer, to, amount)))

const readyRequest = (amount: string, payoutTo?: Address) =>
  Effect.flatMap(ChainServiceFixture, ({ service, api }) =>
    Effect.promise(() => readyRequestOver({ service, api, payer }, amount, payoutTo))
  )

const waitForStatus = (id: string, status: string, ms = 20_000) =>
  Effect.gen(function* () {
    const { api } = yield* ChainServiceFixture
    const until = Date.now() + ms
    let last: { status: string; received_base_units: string } | undefined
    while (Date.now() < until) {
      last = (yield* Effect.promise(() =>
        api.call<{ status: string; received_base_units: string }>("GET", `/v1/deposit-requests/${id}`)
      )).body
      if (last.status === status) return last
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`status stayed ${last?.status}`)
  })

/** The service's command line, run as a merchant or an operator would; it rejects when the command fails. */
const cli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { env })

// Real time throughout: the service and the chain run on the wall clock, so the tests do too.
layer(ChainLive, { timeout: 60_000, excludeTestServices: true })("the chain watcher", (it) => {
  it.effect("counts finalized transfers to a deposit address: partial, then funded, once each", () =>
    Effect.gen(function* () {
      const { local, api, db } = yield* ChainServiceFixture
      const { id, address } = yield* readyRequest("5.000000")
      yield* Effect.promise(() => local.mint(payer.address, 10_000_000n))
      yield* pay(address, 2_000_000n)
      const partial = yield* waitForStatus(id, "partially_deposited")
      assert.strictEqual(partial.received_base_units, "2000000")
      yield* pay(address, 3_000_000n)
      const funded = yield* waitForStatus(id, "deposited")
      assert.strictEqual(funded.received_base_units, "5000000")
      const credits = yield* Effect.promise(() =>
        db.query<{ n: number }>(
          "select count(*)::int as n from chain_credits where deposit_request_id = $1",
          [id.slice(3)]
        )
      )
      assert.strictEqual(credits.rows[0]?.n, 2)
      const settle = yield* Effect.promise(() =>
        db.query<{ payload: { amount_base_units: string } }>(
          "select payload from outbox where deposit_request_id = $1 and topic = 'command.settle'",
          [id.slice(3)]
        )
      )
      assert.deepStrictEqual(
        settle.rows.map((r) => r.payload.amount_base_units),
        ["5000000"]
      )
      const events = yield* Effect.promise(() =>
        api.call<{ events: Array<{ type: string }> }>("GET", `/v1/events?deposit_request_id=${id}`)
      )
      assert.deepStrictEqual(events.body.events.map((e) => e.type).sort(), [
        "deposit_request.deposited",
        "deposit_request.ready"
      ])
    })
  )

  it.effect(
    "marks funds first arriving from a wallet other than the attested one as likely unsolicited",
    () =>
      Effect.gen(function* () {
        const { local, api } = yield* ChainServiceFixture
        const { id, address } = yield* readyRequest("1.000000")
        yield* Effect.promise(() => local.mint(address, 1_000_000n))
        yield* waitForStatus(id, "deposited")
        const view = yield* Effect.promise(() =>
          api.call<{ likely_unsolicited_at: string | null }>("GET", `/v1/deposit-requests/${id}`)
        )
        assert.match(view.body.likely_unsolicited_at ?? "", /Z$/)
        const events = yield* Effect.promise(() =>
          api.call<{ events: Array<{ type: string }> }>("GET", `/v1/events?deposit_request_id=${id}`)
        )
        assert.include(
          events.body.events.map((e) => e.type),
          "deposit_request.likely_unsolicited"
        )
      })
  )

  it.effect("settles exactly the amount to the payout address and returns the overpayment to the payer", () =>
    Effect.gen(function* () {
      const { local, api, db } = yield* ChainServiceFixture
      const balance = (who: Address) => Effect.promise(() => local.balanceOf(who))
      // A payout address of its own, so settlements of the other tests' requests do not land in the balance.
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const { id, address } = yield* readyRequest("4.000000", payout)
      yield* Effect.promise(() => local.mint(payer.address, 10_000_000n))
      const payoutBefore = yield* balance(payout)
      const payerBefore = yield* balance(payer.address)
      yield* pay(address, 6_500_000n)
      yield* waitForStatus(id, "settled", 30_000)
      const until = Date.now() + 30_000
      let recovered: Array<{ reason: string; amount_base_units: string }> = []
      while (Date.now() < until && recovered.length === 0) {
        const events = yield* Effect.promise(() =>
          api.call<{
            events: Array<{
              type: string
              data: { recovery?: { reason: string; amount_base_units: string } }
            }>
          }>("GET", `/v1/events?deposit_request_id=${id}&type=deposit_request.recovered_funds`)
        )
        recovered = events.body.events.flatMap((e) => (e.data.recovery ? [e.data.recovery] : []))
        if (recovered.length === 0) yield* Effect.sleep("200 millis")
      }
      assert.lengthOf(recovered, 1)
      assert.deepInclude(recovered[0]!, { reason: "overpayment", amount_base_units: "2500000" })
      assert.strictEqual((yield* balance(payout)) - payoutBefore, 4_000_000n)
      assert.strictEqual((yield* balance(payer.address)) - payerBefore, -6_500_000n + 2_500_000n)
      assert.strictEqual(yield* balance(address), 0n)
      const view = yield* Effect.promise(() =>
        api.call<{ status: string; settlement: { transaction_hash: string } }>(
          "GET",
          `/v1/deposit-requests/${id}`
        )
      )
      assert.strictEqual(view.body.status, "settled")
      assert.match(view.body.settlement.transaction_hash, /^0x[0-9a-f]{64}$/)
      const transfers = yield* Effect.promise(() =>
        db.query("select kind, state from transfers where deposit_request_id = $1 order by created_at", [
          id.slice(3)
        ])
      )
      assert.deepStrictEqual(transfers.rows, [
        { kind: "settle", state: "confirmed" },
        { kind: "return", state: "confirmed" }
      ])

      // The merchant reads the same story: one payment in, the settlement and the return out, to the base unit.
      const read = yield* Effect.promise(() =>
        api.call<{
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
      )
      assert.strictEqual(read.status, 200)
      assert.isNull(read.body.next_cursor)
      assert.deepStrictEqual(
        read.body.transfers.map((t) => [t.direction, t.kind, t.amount_base_units, t.from, t.to, t.finality]),
        [
          ["in", "payment", "6500000", payer.address, address, "finalized"],
          ["out", "settlement", "4000000", address, payout, "finalized"],
          ["out", "return", "2500000", address, payer.address, "finalized"]
        ]
      )
      const sum = (direction: string) =>
        read.body.transfers
          .filter((t) => t.direction === direction)
          .reduce((total, t) => total + BigInt(t.amount_base_units), 0n)
      assert.strictEqual(sum("in") - sum("out"), 0n)
      const ledger = yield* Effect.promise(() =>
        api.call<{
          recoveries: Array<{
            id: string
            reason: string
            amount_base_units: string
            transaction_hash: string
          }>
        }>("GET", `/v1/deposit-requests/${id}/recoveries`)
      )
      assert.lengthOf(ledger.body.recoveries, 1)
      assert.deepInclude(ledger.body.recoveries[0]!, { reason: "overpayment", amount_base_units: "2500000" })
      assert.match(ledger.body.recoveries[0]?.id ?? "", /^rec_/)
      assert.strictEqual(
        ledger.body.recoveries[0]?.transaction_hash,
        read.body.transfers.find((t) => t.kind === "return")?.transaction_hash
      )
    })
  )

  it.effect("funds a sandbox address from the CLI faucet, and refuses in production", () =>
    Effect.gen(function* () {
      const { local } = yield* ChainServiceFixture
      const to = privateKeyToAccount(generatePrivateKey()).address
      const env = {
        ...process.env,
        CHAIN_RPC_URL: local.node.rpcUrl,
        TOKEN_ADDRESS: local.token,
        DATABASE_URL: ""
      }
      const { stdout } = yield* Effect.promise(() =>
        cli(["devnet", "fund", "--address", to.toLowerCase(), "--amount", "1.500000", "--json"], env)
      )
      assert.deepInclude(JSON.parse(stdout), { address: to, amount_base_units: "1500000" })
      assert.strictEqual(yield* Effect.promise(() => local.balanceOf(to)), 1_500_000n)
      const refused = yield* Effect.flip(
        Effect.tryPromise(() =>
          cli(["devnet", "fund", "--address", to, "--amount", "1.000000"], {
            ...env,
            SERVICE_ENV: "production"
          })
        )
      )
      assert.strictEqual(refused._tag, "UnknownException")
      assert.include((refused.error as { stderr: string }).stderr, "sandbox only")
    })
  )

  it.effect("ignores transfers to addresses it does not watch", () =>
    Effect.gen(function* () {
      const { local, db } = yield* ChainServiceFixture
      const credited = Effect.promise(() => db.query("select count(*)::int as n from chain_credits")).pipe(
        Effect.map((r) => r.rows[0]?.n)
      )
      const stranger = privateKeyToAccount(generatePrivateKey()).address
      const before = yield* credited
      yield* Effect.promise(() => local.mint(stranger, 1_000_000n))
      yield* Effect.sleep("2500 millis")
      assert.strictEqual(yield* credited, before)
    })
  )

  it.effect(
    "lets a sandbox merchant try the money paths from the CLI: partial, exact, then a late transfer returned",
    () =>
      Effect.gen(function* () {
        const { local, service, api } = yield* ChainServiceFixture
        const payout = privateKeyToAccount(generatePrivateKey()).address
        const { id, address } = yield* readyRequest("2.000000", payout)
        const payFromCli = (mode: string) =>
          Effect.promise(() =>
            cli(["devnet", "pay", "--request", id, "--mode", mode, "--json"], {
              ...process.env,
              CHAIN_RPC_URL: local.node.rpcUrl,
              TOKEN_ADDRESS: local.token,
              DATABASE_URL: service.databaseUrl
            })
          ).pipe(
            Effect.map(
              ({ stdout }) => JSON.parse(stdout) as { from: string; to: string; amount_base_units: string }
            )
          )
        const partial = yield* payFromCli("partial")
        assert.deepInclude(partial, { from: payer.address, to: address, amount_base_units: "1000000" })
        assert.strictEqual((yield* waitForStatus(id, "partially_deposited")).received_base_units, "1000000")
        assert.strictEqual((yield* payFromCli("exact")).amount_base_units, "1000000")
        yield* waitForStatus(id, "settled", 30_000)
        assert.strictEqual((yield* payFromCli("late")).amount_base_units, "2000000")
        const until = Date.now() + 30_000
        let late: Array<{ reason: string; amount_base_units: string }> = []
        while (Date.now() < until && late.length === 0) {
          late = (yield* Effect.promise(() =>
            api.call<{ recoveries: Array<{ reason: string; amount_base_units: string }> }>(
              "GET",
              `/v1/deposit-requests/${id}/recoveries`
            )
          )).body.recoveries.filter((r) => r.reason === "late_transfer")
          if (late.length === 0) yield* Effect.sleep("200 millis")
        }
        assert.lengthOf(late, 1)
        assert.deepInclude(late[0]!, { amount_base_units: "2000000" })
        assert.strictEqual(yield* Effect.promise(() => local.balanceOf(payout)), 2_000_000n)
      }),
    // Three CLI processes and a settlement: on a loaded CI machine (beside the NATS node-loss run) past a minute.
    120_000
  )

  it.effect(
    "reconciles every request of the account to the base unit after the flows, and names a difference",
    () =>
      Effect.gen(function* () {
        const { local, service, api, db, merchant } = yield* ChainServiceFixture
        type Report = {
          differences: Array<{ deposit_request_id: string }>
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
        const reconciliation = Effect.promise(() =>
          api.call<Report>("GET", "/v1/reconciliation?limit=100")
        ).pipe(Effect.map((res) => res.body))
        // Settlements of the earlier flows may still be finalizing: the books balance once they are final.
        const until = Date.now() + 30_000
        let report = yield* reconciliation
        while (Date.now() < until && report.totals.requests_with_differences > 0) {
          yield* Effect.sleep("250 millis")
          report = yield* reconciliation
        }
        assert.deepStrictEqual(
          report.requests.filter((r) => r.differences.length > 0),
          []
        )
        assert.isTrue(
          report.requests.some((r) => r.settled_base_units !== "0" && r.returned_base_units !== "0")
        )
        assert.isTrue(
          report.requests.every((r) => r.chain_balance_base_units !== null || r.settled_base_units === "0")
        )
        const t = report.totals
        assert.strictEqual(
          BigInt(t.credited_base_units),
          BigInt(t.settled_base_units) + BigInt(t.returned_base_units) + BigInt(t.held_base_units)
        )
        const reconcile = () =>
          cli(["reconcile", "--account", merchant.accountId, "--json"], {
            ...process.env,
            CHAIN_RPC_URL: local.node.rpcUrl,
            TOKEN_ADDRESS: local.token,
            DATABASE_URL: service.databaseUrl
          })
        const fromCli = JSON.parse((yield* Effect.promise(reconcile)).stdout) as Report
        assert.deepStrictEqual(fromCli.totals, report.totals)

        // A return the ledger does not know about (1 base unit) is named, by rule and amount, and fails the command.
        const settledOne = report.requests.find((r) => r.returned_base_units !== "0")!
        yield* Effect.promise(() =>
          db.query(
            `insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce, tx_hash, raw_tx, state, created_at)
       values ('reconcile-probe', $1, 'return', $2, 1, 0, $3, '0x', 'confirmed', now())`,
            [settledOne.deposit_request_id.slice(3), payer.address, `0x${"ab".repeat(32)}`]
          )
        )
        yield* Effect.gen(function* () {
          const after = yield* reconciliation
          const off = after.requests.find((r) => r.deposit_request_id === settledOne.deposit_request_id)
          // Named first too, among the differences, from the books kept beside the ledger.
          assert.deepStrictEqual(
            after.differences.map((r) => r.deposit_request_id),
            [settledOne.deposit_request_id]
          )
          assert.includeDeepMembers(off?.differences ?? [], [
            { rule: "recoveries", difference_base_units: "-1" },
            { rule: "chain_balance", difference_base_units: "1" }
          ])
          const failed = yield* Effect.flip(Effect.tryPromise(reconcile))
          assert.strictEqual(failed._tag, "UnknownException")
          assert.strictEqual((failed.error as { code?: number }).code, 1)
        }).pipe(
          Effect.ensuring(
            Effect.promise(() => db.query("delete from transfers where command_id = 'reconcile-probe'"))
          )
        )
      })
  )
})
