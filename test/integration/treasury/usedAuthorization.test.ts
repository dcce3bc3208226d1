import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Address } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount, DEV_ACCOUNT } from "../../../infra/chain/Anvil"
import { formatAmount } from "../../../services/domain/Amount"
import { Metrics } from "../../../services/platform/Metrics"
import { readyRequest } from "../../support/Payer"
import { ChainServiceFixture, chainServiceLayer, untilStatus } from "../../support/scopedChainService"

/**
 * Issue 47: after a restore from a backup taken before a settlement, the settle command comes again and its
 * authorization (the same one: its nonce is the command id's) is already used on chain. The treasury recognises the
 * transaction that used it as the transfer, follows it to final, and sends nothing: no second payout, no
 * `transfer_reverted` pause.
 */
const ChainLive = chainServiceLayer({}, { mineWhileWaiting: true })
const payer = anvilDevAccount(3)
const treasury = anvilDevAccount(DEV_ACCOUNT.treasury).address

layer(ChainLive, { timeout: 120_000, excludeTestServices: true })(
  "a settlement the chain already made",
  (it) => {
    it.effect("is recognised from its authorization's log when the database no longer knows it", () =>
      Effect.gen(function* () {
        const { local, service, api, db } = yield* ChainServiceFixture
        const amount = 3_000_000n
        const payout = privateKeyToAccount(generatePrivateKey()).address
        const { id, address } = yield* Effect.promise(() =>
          readyRequest({ service, api, payer }, formatAmount(amount), payout)
        )
        yield* Effect.promise(() => local.mint(payer.address, amount))
        yield* Effect.promise(() => local.pay(payer, address as Address, amount))
        yield* untilStatus(id, "settled")
        const commandId = `settle:${id}`
        const first = yield* Effect.promise(async () => {
          const rows = await db.query<{ tx_hash: string; state: string }>(
            "select tx_hash, state from transfers where command_id = $1",
            [commandId]
          )
          return rows.rows[0]!
        })
        const sent = yield* Effect.promise(() => local.chain.getTransactionCount({ address: treasury }))

        // The database as an older backup left it: the transfer unknown, its command not yet consumed.
        yield* Effect.promise(async () => {
          await db.query("delete from transfers where command_id = $1", [commandId])
          await db.query(
            "update outbox set published_at = null where topic = 'command.settle' and payload->>'command_id' = $1",
            [commandId]
          )
        })
        const again = yield* Effect.promise(() =>
          local.mineUntil(async () => {
            const rows = await db.query<{ tx_hash: string; state: string }>(
              "select tx_hash, state from transfers where command_id = $1 and state = 'confirmed'",
              [commandId]
            )
            return rows.rows[0]
          })
        )
        assert.strictEqual(again.tx_hash.toLowerCase(), first.tx_hash.toLowerCase())
        assert.strictEqual(
          yield* Effect.promise(() => local.chain.getTransactionCount({ address: treasury })),
          sent
        )
        assert.strictEqual(yield* Effect.promise(() => local.balanceOf(payout)), amount)
        assert.strictEqual((yield* untilStatus(id, "settled")).status, "settled")
        const held = yield* Effect.promise(() =>
          db.query("select 1 from held_transfers where command_id = $1", [commandId])
        )
        assert.strictEqual(held.rows.length, 0)
        // Said in one place: the counter an operator's dashboard shows.
        const found = yield* Effect.promise(() =>
          service.runtime.runPromise(
            Effect.flatMap(Metrics, (m) => Effect.promise(() => m.transfersFoundOnChain.get()))
          )
        )
        assert.deepStrictEqual(
          found.values.map((v) => [v.labels.outcome, v.value]),
          [["found", 1]]
        )
      })
    )
  }
)
