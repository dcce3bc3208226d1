import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { type Address, encodeAbiParameters, keccak256, numberToHex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount, DEV_ACCOUNT } from "../../../infra/chain/Anvil"
import { fiatTokenAbi } from "../../../infra/contracts/FiatToken"
import { formatAmount } from "../../../services/domain/Amount"
import type { LocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import {
  ChainServiceFixture,
  chainServiceLayer,
  resumeRequest,
  untilRequest,
  untilStatus
} from "../../support/scopedChainService"

/**
 * Issue 44: the faults only Circle's real token has, on FiatToken v2.2 itself. A blacklisted payout address, payer
 * wallet or deposit address holds its transfer and pauses its request with the reason, without one transaction sent
 * that could only revert; a blacklisting between the check and the block is diagnosed from the token; a paused token
 * holds every transfer with no request paused, and everything goes out by itself once it is unpaused.
 */

const ChainLive = chainServiceLayer({}, { mineWhileWaiting: true })

const payer = anvilDevAccount(3)
const treasury = anvilDevAccount(DEV_ACCOUNT.treasury).address

/** Transactions the treasury has sent (its nonce): what would show a transfer broadcast that could only revert. */
const treasurySent = Effect.flatMap(ChainServiceFixture, ({ local }) =>
  Effect.promise(() => local.chain.getTransactionCount({ address: treasury }))
)

/** A ready request to a fresh payout address, funded for the payer; the payment is made by the caller. */
const funded = (baseUnits: bigint, extra = 0n) =>
  Effect.flatMap(ChainServiceFixture, ({ local, service, api }) =>
    Effect.promise(async () => {
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const { id, address } = await readyRequest({ service, api, payer }, formatAmount(baseUnits), payout)
      await local.mint(payer.address, baseUnits + extra)
      return { id, address: address as Address, payout }
    })
  )

const heldRows = (id: string) =>
  Effect.flatMap(ChainServiceFixture, ({ db }) =>
    Effect.promise(async () =>
      (
        await db.query<{ code: string; topic: string }>(
          "select code, topic from held_transfers where deposit_request_id = $1",
          [id.slice(3)]
        )
      ).rows.map((r) => r.code)
    )
  )

/** The member notices the request's pauses and holds queued (infra/decisions/0085-notices-by-email.md), by kind. */
const noticeRows = (id: string) =>
  Effect.flatMap(ChainServiceFixture, ({ db }) =>
    Effect.promise(async () =>
      (
        await db.query<{ kind: string; code: string }>(
          "select kind, code from pending_notices where subject_id = $1 order by kind",
          [id.slice(3)]
        )
      ).rows.map((r) => `${r.kind} ${r.code}`)
    )
  )

const balance = (who: Address) =>
  Effect.flatMap(ChainServiceFixture, ({ local }) => Effect.promise(() => local.balanceOf(who)))

/** FiatToken's storage: `balanceAndBlacklistStates` is the mapping at slot 9, `paused` sits beside the pauser in slot 1. */
const balanceSlot = (who: Address) =>
  keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [who, 9n]))
const PAUSABLE_SLOT = numberToHex(1n, { size: 32 })
const PAUSED_BIT = 1n << 160n

/** Sets the `paused` flag in storage, as of the next block, with no transaction of the pauser's. */
const pausedFlag = async (local: LocalChain, on: boolean) => {
  const word = BigInt(
    (await local.chain.getStorageAt({ address: local.token, slot: PAUSABLE_SLOT })) ?? "0x0"
  )
  await local.chain.setStorageAt({
    address: local.token,
    index: PAUSABLE_SLOT,
    value: numberToHex(on ? word | PAUSED_BIT : word & ~PAUSED_BIT, { size: 32 })
  })
}

/** Sets an address's balance in storage (no Transfer event, so the watcher sees nothing). */
const balanceInStorage = (local: LocalChain, who: Address, amount: bigint) =>
  local.chain.setStorageAt({
    address: local.token,
    index: balanceSlot(who),
    value: numberToHex(amount, { size: 32 })
  })

/** Sets or clears the blacklist bit of an address with no balance, in storage, as of the next block. */
const blacklistFlag = async (local: LocalChain, who: Address, on: boolean) => {
  await local.chain.setStorageAt({
    address: local.token,
    index: balanceSlot(who),
    value: numberToHex(on ? 1n << 255n : 0n, { size: 32 })
  })
}

/**
 * Automine off once the request is paid: the settlement is signed and waits in the pool, then `change` alters the
 * token's storage (no transaction that could be mined first) and the next block mines the settlement against it.
 */
/** Polls without mining, so nothing the service sent meanwhile can be mined before the test means it to. */
const untilUnmined = async <A>(read: () => Promise<A | undefined>, ms = 30_000): Promise<A> => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const value = await read()
    if (value !== undefined) return value
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error("timed out")
}

/**
 * The token changes after the settlement was estimated and sent, and before it is mined. The payment is mined but not
 * yet final when this starts; with automine off, ONE call mines the blocks that make it final, so the settlement
 * can only be sent after that call and waits in the node's pool (seen there, not only recorded) until the change.
 */
const settlementThenTokenChange = (id: string, change: (local: LocalChain) => Promise<void>) =>
  Effect.flatMap(ChainServiceFixture, ({ local, db }) =>
    Effect.promise(async () => {
      await local.chain.setAutomine(false)
      try {
        await local.chain.mine({ blocks: 3 })
        const signed = await untilUnmined(async () => {
          const rows = await db.query<{ tx_hash: `0x${string}` }>(
            "select tx_hash from transfers where deposit_request_id = $1 and kind = 'settle'",
            [id.slice(3)]
          )
          return rows.rows[0]
        })
        await untilUnmined(() =>
          local.chain.getTransaction({ hash: signed.tx_hash }).then(
            (tx) => (tx.blockNumber === null ? true : undefined),
            () => undefined
          )
        )
        await change(local)
        await local.chain.mine({ blocks: 1 })
        return signed
      } finally {
        await local.chain.setAutomine(true)
      }
    })
  )

const control = <A>(f: (c: LocalChain["controls"]) => Promise<A>) =>
  Effect.flatMap(ChainServiceFixture, ({ local }) => Effect.promise(() => f(local.controls)))

layer(ChainLive, { timeout: 120_000, excludeTestServices: true })(
  "the real USDC's blacklist and pause",
  (it) => {
    describe("a blacklisted payout address", () => {
      it.effect("holds the settlement unsent, pauses the request, and settles once freed and resumed", () =>
        Effect.gen(function* () {
          const { local } = yield* ChainServiceFixture
          const { id, address, payout } = yield* funded(2_000_000n)
          yield* control((c) => c.blacklist(payout))
          const sent = yield* treasurySent
          yield* Effect.promise(() => local.pay(payer, address, 2_000_000n))
          const paused = yield* untilStatus(id, "needs_attention")
          assert.strictEqual(paused.attention?.code, "payout_address_blocked")
          assert.deepStrictEqual(yield* noticeRows(id), ["request_paused payout_address_blocked"])
          assert.include(paused.attention?.message ?? "", payout)
          assert.deepStrictEqual(yield* heldRows(id), ["payout_address_blocked"])
          // Blocks go by: no transaction was sent, none is tried again while the request waits.
          yield* Effect.promise(() => local.chain.mine({ blocks: 5 }))
          yield* Effect.sleep("1500 millis")
          assert.strictEqual(yield* treasurySent, sent)
          assert.strictEqual(yield* balance(address), 2_000_000n)

          yield* control((c) => c.unBlacklist(payout))
          assert.strictEqual((yield* resumeRequest(id)).status, 200)
          yield* untilStatus(id, "settled")
          assert.strictEqual(yield* balance(payout), 2_000_000n)
          assert.strictEqual(yield* balance(address), 0n)
          assert.deepStrictEqual(yield* heldRows(id), [])
        })
      )
    })

    describe("a blacklisted payer wallet", () => {
      it.effect(
        "settles the amount, holds the overpayment's return as owed, and returns it once resumed",
        () =>
          Effect.gen(function* () {
            const { local, api } = yield* ChainServiceFixture
            const { id, address, payout } = yield* funded(1_000_000n, 500_000n)
            const before = yield* balance(payer.address)
            yield* Effect.promise(() => local.pay(payer, address, 1_500_000n))
            // The settlement leaves first; the payer is blacklisted before the return is signed.
            yield* untilRequest(id, (v) => v.status === "settled" || v.status === "deposited")
            yield* control((c) => c.blacklist(payer.address))
            const paused = yield* Effect.gen(function* () {
              const found = yield* untilStatus(id, "needs_attention")
              assert.strictEqual(yield* balance(payout), 1_000_000n)
              return found
            }).pipe(Effect.ensuring(control((c) => c.unBlacklist(payer.address))))
            assert.strictEqual(paused.attention?.code, "payer_wallet_blocked")
            assert.deepStrictEqual(yield* noticeRows(id), [
              "request_paused payer_wallet_blocked",
              "return_held payer_wallet_blocked"
            ])
            assert.strictEqual(yield* balance(address), 500_000n)
            // Owed, not lost: the request's books still show the remainder as on its way back.
            const recoveries = yield* Effect.promise(() =>
              api.call<{ recoveries: ReadonlyArray<unknown> }>("GET", `/v1/deposit-requests/${id}/recoveries`)
            )
            assert.strictEqual(recoveries.body.recoveries.length, 0)
            // Reconciliation shows the return as held back, on the deposit address, not as a difference.
            yield* Effect.promise(() => local.chain.mine({ blocks: 3 }))
            const books = yield* Effect.promise(() =>
              api.call<{
                requests: ReadonlyArray<{
                  deposit_request_id: string
                  held_base_units: string
                  held_back: ReadonlyArray<{ kind: string; code: string; amount_base_units: string }>
                  differences: ReadonlyArray<unknown>
                }>
              }>("GET", "/v1/reconciliation?limit=100")
            )
            const mine = books.body.requests.find((r) => r.deposit_request_id === id)
            assert.deepStrictEqual(mine?.held_back, [
              { kind: "return", code: "payer_wallet_blocked", amount_base_units: "500000" }
            ])
            assert.strictEqual(mine?.held_base_units, "500000")
            assert.deepStrictEqual(mine?.differences, [])
            assert.strictEqual((yield* resumeRequest(id)).status, 200)
            yield* untilRequest(id, (v) => v.status === "settled" && v.attention === null)
            yield* Effect.promise(() =>
              local.mineUntil(async () => ((await local.balanceOf(address)) === 0n ? true : undefined))
            )
            assert.strictEqual(yield* balance(payer.address), before - 1_000_000n)
          })
      )
    })

    describe("a blacklisted deposit address", () => {
      it.effect("moves nothing until it is freed, then resume settles", () =>
        Effect.gen(function* () {
          const { local } = yield* ChainServiceFixture
          const { id, address, payout } = yield* funded(1_000_000n)
          yield* Effect.promise(() => local.pay(payer, address, 1_000_000n))
          yield* control((c) => c.blacklist(address))
          const sent = yield* treasurySent
          const paused = yield* untilStatus(id, "needs_attention")
          assert.strictEqual(paused.attention?.code, "deposit_address_blocked")
          assert.strictEqual(yield* treasurySent, sent)
          yield* control((c) => c.unBlacklist(address))
          assert.strictEqual((yield* resumeRequest(id)).status, 200)
          yield* untilStatus(id, "settled")
          assert.strictEqual(yield* balance(payout), 1_000_000n)
        })
      )
    })

    describe("a blacklisting between the check and the block", () => {
      it.effect(
        "records the reverted settlement, pauses with the cause, and sends nothing more until resumed",
        () =>
          Effect.gen(function* () {
            const { local, db } = yield* ChainServiceFixture
            const { id, address, payout } = yield* funded(3_000_000n)
            yield* Effect.promise(() => local.pay(payer, address, 3_000_000n))
            // Automine off once paid: the settlement waits in the pool while the blacklister acts. The flag is written
            // straight into the token's storage (the top bit of `balanceAndBlacklistStates`, slot 9), so no transaction of
            // the blacklister's can be mined before the settlement; the next block then reverts it.
            const signed = yield* settlementThenTokenChange(id, (l) => blacklistFlag(l, payout, true))
            assert.isTrue(
              yield* Effect.promise(() =>
                local.chain.readContract({
                  address: local.token,
                  abi: fiatTokenAbi,
                  functionName: "isBlacklisted",
                  args: [payout]
                })
              )
            )
            const paused = yield* untilStatus(id, "needs_attention")
            assert.strictEqual(paused.attention?.code, "payout_address_blocked")
            const row = yield* Effect.promise(() =>
              db.query<{ state: string; tx_hash: string }>(
                "select state, tx_hash from transfers where deposit_request_id = $1 and kind = 'settle'",
                [id.slice(3)]
              )
            )
            assert.strictEqual(row.rows[0]?.state, "reverted")
            assert.include(paused.attention?.message ?? "", row.rows[0]!.tx_hash)
            assert.isDefined(signed)
            const sent = yield* treasurySent
            yield* Effect.promise(() => local.chain.mine({ blocks: 5 }))
            yield* Effect.sleep("1500 millis")
            assert.strictEqual(yield* treasurySent, sent)

            yield* control((c) => c.unBlacklist(payout))
            assert.strictEqual((yield* resumeRequest(id)).status, 200)
            yield* untilStatus(id, "settled")
            assert.strictEqual(yield* balance(payout), 3_000_000n)
            // One transaction reverted, one settled: the same authorization, carried by a second transaction.
            assert.strictEqual((yield* treasurySent) - sent, 1)
            assert.strictEqual(yield* balance(address), 0n)
          })
      )
    })

    describe("a paused token", () => {
      it.effect(
        "holds every settlement across blocks without pausing a request, then settles each once",
        () =>
          Effect.gen(function* () {
            const { local, db, service } = yield* ChainServiceFixture
            const first = yield* funded(1_000_000n)
            const second = yield* funded(2_000_000n)
            yield* Effect.promise(() => local.pay(payer, first.address, 1_000_000n))
            yield* Effect.promise(() => local.pay(payer, second.address, 2_000_000n))
            yield* control((c) => c.pause())
            const sent = yield* treasurySent
            yield* Effect.gen(function* () {
              yield* untilStatus(first.id, "deposited")
              yield* untilStatus(second.id, "deposited")
              // Several blocks and treasury passes while paused: nothing sent, nothing paused, the pause recorded.
              for (let i = 0; i < 4; i++) {
                yield* Effect.promise(() => local.chain.mine({ blocks: 2 }))
                yield* Effect.sleep("700 millis")
              }
              assert.strictEqual(yield* treasurySent, sent)
              assert.strictEqual((yield* untilStatus(first.id, "deposited")).attention, null)
              const status = yield* Effect.promise(() =>
                db.query<{ paused: boolean }>("select paused from token_status where token = $1", [
                  local.token.toLowerCase()
                ])
              )
              assert.strictEqual(status.rows[0]?.paused, true)
              // Every instance's health says so, as the dashboard's banner shows it.
              const health = yield* Effect.promise(async () => {
                const res = await service.request("/v1/health")
                return (await res.json()) as { token: { paused: boolean } | null }
              })
              assert.strictEqual(health.token?.paused, true)
            }).pipe(Effect.ensuring(control((c) => c.unpause())))
            yield* untilStatus(first.id, "settled")
            yield* untilStatus(second.id, "settled")
            assert.strictEqual(yield* balance(first.payout), 1_000_000n)
            assert.strictEqual(yield* balance(second.payout), 2_000_000n)
            const transfers = yield* Effect.promise(() =>
              db.query<{ n: string }>(
                "select count(*)::text as n from transfers where deposit_request_id = any($1::uuid[])",
                [[first.id.slice(3), second.id.slice(3)]]
              )
            )
            assert.strictEqual(transfers.rows[0]?.n, "2")
            const after = yield* Effect.promise(async () => (await service.request("/v1/health")).json())
            assert.strictEqual((after as { token: { paused: boolean } }).token.paused, false)
          })
      )
    })

    describe("a transfer whose simulation keeps reverting for another reason", () => {
      it.effect("is held as transfer_reverted with the revert reason after a bounded number of tries", () =>
        Effect.gen(function* () {
          const { local, db } = yield* ChainServiceFixture
          const { id, address, payout } = yield* funded(1_000_000n)
          const sent = yield* treasurySent
          yield* Effect.promise(() => local.pay(payer, address, 1_000_000n))
          // The payment's log stays (so it is credited when final) but the balance goes: every simulation reverts.
          yield* Effect.promise(() => balanceInStorage(local, address, 0n))
          const paused = yield* untilStatus(id, "needs_attention")
          assert.strictEqual(paused.attention?.code, "transfer_reverted")
          assert.include(paused.attention?.message ?? "", "transfer amount exceeds balance")
          assert.deepStrictEqual(yield* heldRows(id), ["transfer_reverted"])
          assert.strictEqual(yield* treasurySent, sent)
          const reason = yield* Effect.promise(() =>
            db.query<{ reason: string }>("select reason from held_transfers where deposit_request_id = $1", [
              id.slice(3)
            ])
          )
          assert.include(reason.rows[0]?.reason ?? "", "exceeds balance")

          yield* Effect.promise(() => balanceInStorage(local, address, 1_000_000n))
          assert.strictEqual((yield* resumeRequest(id)).status, 200)
          yield* untilStatus(id, "settled")
          assert.strictEqual(yield* balance(payout), 1_000_000n)
        })
      )
    })

    describe("a pause between the check and the block", () => {
      it.effect(
        "records the reverted settlement and sends it again by itself once unpaused, pausing no request",
        () =>
          Effect.gen(function* () {
            const { local, db } = yield* ChainServiceFixture
            const { id, address, payout } = yield* funded(4_000_000n)
            yield* Effect.promise(() => local.pay(payer, address, 4_000_000n))
            yield* settlementThenTokenChange(id, (l) => pausedFlag(l, true))
            const sent = yield* treasurySent
            yield* Effect.gen(function* () {
              yield* Effect.promise(() =>
                local.mineUntil(async () => {
                  const rows = await db.query<{ state: string }>(
                    "select state from transfers where deposit_request_id = $1 and kind = 'settle'",
                    [id.slice(3)]
                  )
                  return rows.rows[0]?.state === "reverted" ? true : undefined
                })
              )
              // Paused: nothing more is sent and the request is not paused, however many blocks go by.
              for (let i = 0; i < 3; i++) {
                yield* Effect.promise(() => local.chain.mine({ blocks: 2 }))
                yield* Effect.sleep("600 millis")
              }
              assert.strictEqual(yield* treasurySent, sent)
              const still = yield* untilStatus(id, "deposited")
              assert.strictEqual(still.attention, null)
            }).pipe(Effect.ensuring(Effect.promise(() => pausedFlag(local, false))))
            yield* untilStatus(id, "settled")
            assert.strictEqual(yield* balance(payout), 4_000_000n)
            assert.strictEqual((yield* treasurySent) - sent, 1)
          })
      )
    })

    describe("a settlement reverted by a blacklisting, resumed to another payout address", () => {
      it.effect(
        "settles to the new address, and the authorization the reverted transaction published can never run",
        () =>
          Effect.gen(function* () {
            const { local, db, api, service, merchant } = yield* ChainServiceFixture
            const { id, address, payout } = yield* funded(5_000_000n)
            yield* Effect.promise(() => local.pay(payer, address, 5_000_000n))
            yield* settlementThenTokenChange(id, (l) => blacklistFlag(l, payout, true))
            const paused = yield* untilStatus(id, "needs_attention")
            assert.strictEqual(paused.attention?.code, "payout_address_blocked")
            // The reverted transaction carries the signed authorization to the old address: it is public now.
            const reverted = yield* Effect.promise(() =>
              db.query<{ tx_hash: `0x${string}` }>(
                "select tx_hash from transfers where deposit_request_id = $1 and state = 'reverted'",
                [id.slice(3)]
              )
            )
            const published = yield* Effect.promise(() =>
              local.chain.getTransaction({ hash: reverted.rows[0]!.tx_hash })
            )

            const other = privateKeyToAccount(generatePrivateKey()).address
            const created = yield* Effect.promise(() =>
              api.call<{ id: string }>("POST", "/v1/payout-addresses", { address: other })
            )
            const resumed = yield* Effect.promise(() =>
              service.request(`/v1/deposit-requests/${id}/resume`, {
                method: "POST",
                headers: { ...merchant.headers("session"), "content-type": "application/json" },
                body: JSON.stringify({ payout_address_id: created.body.id })
              })
            )
            assert.strictEqual(resumed.status, 200)
            yield* untilStatus(id, "settled")
            assert.strictEqual(yield* balance(other), 5_000_000n)
            assert.strictEqual(yield* balance(payout), 0n)

            // The old address is freed and the deposit address holds money again: anyone replaying the published
            // authorization is refused by the token, since the redirect used its nonce.
            yield* Effect.promise(() => blacklistFlag(local, payout, false))
            yield* Effect.promise(() => local.mint(address, 5_000_000n))
            const replay = yield* Effect.promise(() =>
              local.chain
                .call({ account: anvilDevAccount(5).address, to: local.token, data: published.input })
                .then(
                  () => "executed",
                  (e: unknown) => (e instanceof Error ? e.message : String(e))
                )
            )
            assert.include(replay, "FiatTokenV2: authorization is used or canceled")
          })
      )
    })
  }
)
