import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type Address, encodeAbiParameters, keccak256, numberToHex, parseTransaction } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { formatAmount } from "../../../services/domain/Amount"
import type { MerchantClient } from "../../support/Api"
import { readyRequest } from "../../support/Payer"
import {
  ChainServiceFixture,
  chainServiceLayer,
  resumeRequest,
  untilStatus
} from "../../support/scopedChainService"

/**
 * Issue 6: what the chain does wrong, on a local node the test drives block by block. A settlement that reverts
 * pauses its request (`needs_attention`) until an operator resumes it; a stuck settlement is replaced at the same
 * nonce; a payment reorganised away after finality pauses its request (`deep_reorg`); one reorganised away before
 * finality never counts.
 */

// Automine and `finalized` two blocks behind: finality advances only as the test mines. A broadcast transfer with
// no receipt after 1.5 s counts as stuck here (60 s by default).
const ChainLive = chainServiceLayer({}, { config: { transferReplaceAfterMs: 1_500 }, mineWhileWaiting: true })

const payer = anvilDevAccount(4)

/**
 * Sets a token balance in storage (FiatToken keeps `balanceAndBlacklistStates` at slot 9; the top bit is the
 * blacklist flag, clear here): no Transfer event, so the watcher sees nothing.
 */
const setBalance = (who: Address, amount: bigint) =>
  Effect.gen(function* () {
    const { local } = yield* ChainServiceFixture
    const slot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [who, 9n]))
    yield* Effect.promise(() =>
      local.chain.setStorageAt({
        address: local.token,
        index: slot,
        value: numberToHex(amount, { size: 32 })
      })
    )
    assert.strictEqual(yield* Effect.promise(() => local.balanceOf(who)), amount)
  })

const view = (api: MerchantClient, id: string) =>
  api.call<{ status: string; attention: { code: string; resolution: string } | null }>(
    "GET",
    `/v1/deposit-requests/${id}`
  )

/**
 * A ready request paid exactly to a fresh payout address; then automine goes off, so every
 * transaction waits in the mempool until the test mines, and blocks are mined until the settlement is signed.
 */
const paidWithSettlementHeld = (baseUnits: bigint) =>
  Effect.flatMap(ChainServiceFixture, ({ local, service, api, db }) =>
    Effect.promise(async () => {
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
    })
  )

// Real time throughout: the service and the chain run on the wall clock, so the tests do too.
layer(ChainLive, { timeout: 60_000, excludeTestServices: true })("what the chain does wrong", (it) => {
  describe("a settlement that reverts", () => {
    it.effect(
      "pauses the request with needs_attention, and an operator's resume settles it exactly once",
      () =>
        Effect.gen(function* () {
          const { local, api, db } = yield* ChainServiceFixture
          const { id, address, payout, settlement: signed } = yield* paidWithSettlementHeld(3_000_000n)
          // The settlement is broadcast, not mined: empty the address, then mine it into a revert.
          yield* Effect.sleep("300 millis")
          yield* setBalance(address, 0n)
          yield* Effect.promise(() => local.chain.mine({ blocks: 1 }))
          // (If the treasury already replaced it as stuck, whichever of its transactions was mined is the one.)
          const hashes = yield* Effect.promise(() =>
            db.query<{ tx_hash: `0x${string}`; replaced_tx_hashes: Array<`0x${string}`> }>(
              "select tx_hash, replaced_tx_hashes from transfers where deposit_request_id = $1 and kind = 'settle'",
              [id.slice(3)]
            )
          )
          const row = hashes.rows[0]!
          const receipts = yield* Effect.promise(() =>
            Promise.all(
              [row.tx_hash, ...row.replaced_tx_hashes].map((hash) =>
                local.chain.getTransactionReceipt({ hash }).catch(() => undefined)
              )
            )
          )
          assert.deepStrictEqual(
            receipts.filter((r) => r !== undefined).map((r) => r!.status),
            ["reverted"]
          )

          const paused = yield* untilStatus(id, "needs_attention")
          assert.strictEqual(paused.attention?.code, "transfer_reverted")
          assert.match(paused.attention?.resolution ?? "", /resume/)
          const events = yield* Effect.promise(() =>
            api.call<{ events: Array<{ type: string; data: { attention?: unknown } }> }>(
              "GET",
              `/v1/events?deposit_request_id=${id}`
            )
          )
          assert.include(
            events.body.events.map((e) => e.type),
            "deposit_request.needs_attention"
          )
          // The pause's payload carries the same attention object the API shows.
          assert.deepStrictEqual(
            events.body.events.find((e) => e.type === "deposit_request.needs_attention")?.data.attention,
            paused.attention
          )

          // Only a dashboard session resumes; a request that does not need attention cannot be resumed.
          const byKey = yield* Effect.promise(() =>
            api.call<{ error: { code: string } }>("POST", `/v1/deposit-requests/${id}/resume`)
          )
          assert.strictEqual(byKey.status, 401)
          assert.strictEqual(byKey.body.error.code, "identity_unauthorized")

          // The funds are back (as an operator would make sure); resume.
          yield* setBalance(address, 3_000_000n)
          yield* Effect.promise(() => local.chain.setAutomine(true))
          const resumed = yield* resumeRequest(id)
          assert.strictEqual(resumed.status, 200)
          const resumedBody = (yield* Effect.promise(() => resumed.json())) as { status: string }
          assert.strictEqual(resumedBody.status, "deposited")

          yield* untilStatus(id, "settled")
          assert.strictEqual(yield* Effect.promise(() => local.balanceOf(payout)), 3_000_000n)
          assert.strictEqual(yield* Effect.promise(() => local.balanceOf(address)), 0n)
          const again = yield* resumeRequest(id)
          assert.strictEqual(again.status, 409)
          const againBody = (yield* Effect.promise(() => again.json())) as { error: { code: string } }
          assert.strictEqual(againBody.error.code, "invalid_state")

          // One settlement row, re-signed once: final now, with a new hash; the books balance.
          const transfers = yield* Effect.promise(() =>
            db.query<{ state: string; tx_hash: string }>(
              "select state, tx_hash from transfers where deposit_request_id = $1",
              [id.slice(3)]
            )
          )
          assert.lengthOf(transfers.rows, 1)
          assert.strictEqual(transfers.rows[0]?.state, "confirmed")
          assert.notInclude<string | undefined>(
            [signed.tx_hash, ...row.replaced_tx_hashes],
            transfers.rows[0]?.tx_hash
          )
          const report = yield* Effect.promise(() =>
            local.mineUntil(async () => {
              const body = (
                await api.call<{
                  requests: Array<{ deposit_request_id: string; differences: Array<unknown> }>
                }>("GET", "/v1/reconciliation?limit=100")
              ).body
              const mine = body.requests.find((r) => r.deposit_request_id === id)
              return mine !== undefined && mine.differences.length === 0 ? mine : undefined
            })
          )
          assert.deepStrictEqual(report.differences, [])
        })
    )
  })

  describe("a settlement stuck below the chain's fees", () => {
    it.effect("is replaced at the same nonce with higher fees, and only one of the two is ever mined", () =>
      Effect.gen(function* () {
        const { local, api, db } = yield* ChainServiceFixture
        const { id, address, payout, settlement: first } = yield* paidWithSettlementHeld(2_000_000n)
        // Nothing is mined now: the treasury finds the transfer stuck and replaces it.
        const until = Date.now() + 15_000
        let replaced:
          | { tx_hash: `0x${string}`; raw_tx: `0x${string}`; replaced_tx_hashes: Array<string> }
          | undefined
        while (Date.now() < until && replaced === undefined) {
          const rows = yield* Effect.promise(() =>
            db.query<{
              tx_hash: `0x${string}`
              raw_tx: `0x${string}`
              replaced_tx_hashes: Array<string>
            }>(
              "select tx_hash, raw_tx, replaced_tx_hashes from transfers where deposit_request_id = $1 and kind = 'settle'",
              [id.slice(3)]
            )
          )
          if (rows.rows[0] !== undefined && rows.rows[0].tx_hash !== first.tx_hash) replaced = rows.rows[0]
          else yield* Effect.sleep("100 millis")
        }
        assert.deepStrictEqual(replaced?.replaced_tx_hashes, [first.tx_hash])
        const before = parseTransaction(first.raw_tx)
        const after = parseTransaction(replaced!.raw_tx)
        assert.strictEqual(after.nonce, before.nonce)
        assert.strictEqual(after.data, before.data)
        assert.isTrue(after.maxFeePerGas! > before.maxFeePerGas! + before.maxFeePerGas! / 5n)

        // A block whose base fee only the replacement pays: the old transaction can never be mined with it.
        const baseFee = before.maxFeePerGas! + before.maxFeePerGas! / 10n
        assert.isTrue(after.maxFeePerGas! > baseFee)
        yield* Effect.promise(() => local.chain.setNextBlockBaseFeePerGas({ baseFeePerGas: baseFee }))
        yield* Effect.promise(() => local.chain.mine({ blocks: 1 }))
        const mined = yield* Effect.promise(() =>
          local.chain.getTransactionReceipt({ hash: replaced!.tx_hash })
        )
        assert.strictEqual(mined.status, "success")
        const neverMined = yield* Effect.flip(
          Effect.tryPromise(() => local.chain.getTransactionReceipt({ hash: first.tx_hash }))
        )
        assert.strictEqual(neverMined._tag, "UnknownException")
        assert.instanceOf(neverMined.error, Error)
        yield* Effect.promise(() => local.chain.setAutomine(true))

        yield* untilStatus(id, "settled")
        assert.strictEqual(yield* Effect.promise(() => local.balanceOf(payout)), 2_000_000n)
        assert.strictEqual(yield* Effect.promise(() => local.balanceOf(address)), 0n)
        const transfers = yield* Effect.promise(() =>
          api.call<{
            transfers: Array<{ kind: string; transaction_hash: string; finality: string }>
          }>("GET", `/v1/deposit-requests/${id}/transfers`)
        )
        const settlements = transfers.body.transfers.filter((t) => t.kind === "settlement")
        assert.lengthOf(settlements, 1)
        assert.deepInclude(settlements[0]!, { transaction_hash: replaced!.tx_hash, finality: "finalized" })
      })
    )
  })

  describe("a payment reorganised away after it was final", () => {
    it.effect(
      "pauses its request with needs_attention (deep_reorg), and reconciliation shows the missing funds",
      () =>
        Effect.gen(function* () {
          const { local, service, api } = yield* ChainServiceFixture
          const { id, address } = yield* Effect.promise(() =>
            readyRequest({ service, api, payer }, "5.000000")
          )
          yield* Effect.promise(() => local.mint(payer.address, 2_000_000n))
          const receipt = yield* Effect.promise(() => local.pay(payer, address, 2_000_000n))
          yield* untilStatus(id, "partially_deposited")

          // Replace every block from the payment's on (deeper than finality), without the payment.
          const latest = yield* Effect.promise(() => local.chain.getBlockNumber())
          const depth = Number(latest - receipt.blockNumber) + 1
          yield* Effect.promise(() =>
            local.chain.request({ method: "anvil_reorg", params: [depth, []] } as never)
          )
          assert.strictEqual(yield* Effect.promise(() => local.balanceOf(address)), 0n)

          const paused = yield* untilStatus(id, "needs_attention")
          assert.strictEqual(paused.attention?.code, "deep_reorg")
          type Row = {
            deposit_request_id: string
            differences: Array<{ rule: string; difference_base_units: string }>
          }
          const answer = (yield* Effect.promise(() =>
            api.call<{ differences: Array<Row>; requests: Array<Row> }>("GET", "/v1/reconciliation?limit=100")
          )).body
          const report = answer.requests.find((r) => r.deposit_request_id === id)
          assert.deepStrictEqual(report?.differences, [
            { rule: "chain_balance", difference_base_units: "-2000000" }
          ])
          // The books still hold the credit, so the request is compared with the chain among the differences first.
          assert.deepStrictEqual(
            answer.differences.find((r) => r.deposit_request_id === id)?.differences,
            report?.differences
          )
        })
    )
  })

  describe("a payment reorganised away before it was final", () => {
    it.effect("never counts, and a later payment still does", () =>
      Effect.gen(function* () {
        const { local, service, api, db } = yield* ChainServiceFixture
        const { id, address } = yield* Effect.promise(() => readyRequest({ service, api, payer }, "1.000000"))
        yield* Effect.promise(() => local.mint(payer.address, 2_000_000n))
        const snapshot = yield* Effect.promise(() => local.chain.snapshot())
        yield* Effect.promise(() => local.pay(payer, address, 1_000_000n))
        assert.strictEqual(yield* Effect.promise(() => local.balanceOf(address)), 1_000_000n)
        // Seen at `latest` only: finality lags two blocks and nothing else is mined, so the watcher does not take it.
        yield* Effect.sleep("2500 millis")
        yield* Effect.promise(() => local.chain.revert({ id: snapshot }))
        assert.strictEqual(yield* Effect.promise(() => local.balanceOf(address)), 0n)
        yield* Effect.promise(() => local.chain.mine({ blocks: 5 }))
        yield* Effect.sleep("2500 millis")
        const credits = yield* Effect.promise(() =>
          db.query("select 1 from chain_credits where deposit_request_id = $1", [id.slice(3)])
        )
        assert.strictEqual(credits.rowCount, 0)
        const after = (yield* Effect.promise(() => view(api, id))).body as {
          status: string
          received_base_units?: string
        }
        assert.strictEqual(after.status, "ready")

        // The watcher carries on: a real payment counts.
        yield* Effect.promise(() => local.pay(payer, address, 1_000_000n))
        yield* Effect.promise(() =>
          local.mineUntil(async () => ((await view(api, id)).body.status !== "ready" ? true : undefined))
        )
        const counted = yield* Effect.promise(() =>
          db.query("select 1 from chain_credits where deposit_request_id = $1", [id.slice(3)])
        )
        assert.strictEqual(counted.rowCount, 1)
      })
    )
  })

  describe("a treasury out of gas", () => {
    it.effect(
      "pauses the request (treasury_out_of_gas) until the treasury is funded and the request resumed",
      () =>
        Effect.gen(function* () {
          const { local, service, api } = yield* ChainServiceFixture
          const treasury = anvilDevAccount(1).address
          const gas = yield* Effect.promise(() => local.chain.getBalance({ address: treasury }))
          const payout = privateKeyToAccount(generatePrivateKey()).address
          const { id, address } = yield* Effect.promise(() =>
            readyRequest({ service, api, payer }, "1.000000", payout)
          )
          yield* Effect.promise(() => local.mint(payer.address, 1_000_000n))
          // The sandbox command a merchant uses to see this path on `npm start`.
          const emptied = yield* Effect.promise(() =>
            promisify(execFile)(
              process.execPath,
              ["--import", "tsx", "src/cli/main.ts", "devnet", "treasury-gas", "--eth", "0", "--json"],
              {
                env: {
                  ...process.env,
                  CHAIN_RPC_URL: local.node.rpcUrl,
                  TOKEN_ADDRESS: local.token,
                  DATABASE_URL: service.databaseUrl
                }
              }
            )
          )
          assert.deepStrictEqual(JSON.parse(emptied.stdout), { treasury, balance_wei: "0" })
          assert.strictEqual(yield* Effect.promise(() => local.chain.getBalance({ address: treasury })), 0n)
          yield* Effect.gen(function* () {
            yield* Effect.promise(() => local.pay(payer, address, 1_000_000n))
            const paused = yield* untilStatus(id, "needs_attention")
            assert.strictEqual(paused.attention?.code, "treasury_out_of_gas")
            assert.strictEqual(yield* Effect.promise(() => local.balanceOf(payout)), 0n)
          }).pipe(
            Effect.ensuring(Effect.promise(() => local.chain.setBalance({ address: treasury, value: gas })))
          )
          const resumed = yield* resumeRequest(id)
          assert.strictEqual(resumed.status, 200)
          yield* untilStatus(id, "settled")
          assert.strictEqual(yield* Effect.promise(() => local.balanceOf(payout)), 1_000_000n)
          assert.strictEqual(yield* Effect.promise(() => local.balanceOf(address)), 0n)
        })
    )
  })
})
