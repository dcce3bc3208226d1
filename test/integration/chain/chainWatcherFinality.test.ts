import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeChainWatcher } from "../../../services/chain/ChainWatcher"
import { ChainFixture, chainFixture } from "../../support/ChainService"
import { chainAccessOf } from "../../support/LocalChain"

const cursor = Effect.gen(function* () {
  const { db } = yield* ChainFixture
  return Number(
    (yield* Effect.promise(() =>
      db.query<{ last_block: string }>("select last_block::text from chain_cursors")
    )).rows[0]?.last_block
  )
})
const finalized = Effect.gen(function* () {
  const { local } = yield* ChainFixture
  return Number((yield* Effect.promise(() => local.chain.getBlock({ blockTag: "finalized" }))).number)
})
const latest = Effect.gen(function* () {
  const { local } = yield* ChainFixture
  return Number(yield* Effect.promise(() => local.chain.getBlockNumber()))
})
const mine = (blocks: number) =>
  Effect.flatMap(ChainFixture, ({ local }) => Effect.promise(() => local.chain.mine({ blocks })))
const watcherOnTheChain = Effect.flatMap(ChainFixture, ({ local }) =>
  makeChainWatcher(chainAccessOf(local.node.rpcUrl), local.token)
)

// A chain whose `finalized` tag lags 64 blocks: with confirmations the watcher does not wait for it.
describe("finality by confirmations (CHAIN_FINALITY=3)", () => {
  it.layer(chainFixture({ slotsInAnEpoch: 32 }, { chainFinality: { _tag: "Confirmations", n: 3 } }), {
    timeout: 60_000
  })((it) => {
    it.effect(
      "reads up to the block 3 deep, while the node's finalized tag is far behind",
      () =>
        Effect.gen(function* () {
          yield* mine(10)
          const watcher = yield* watcherOnTheChain
          yield* watcher.step()
          const head = yield* latest
          assert.strictEqual(yield* cursor, head - 2)
          assert.isBelow(yield* finalized, head - 2)
          yield* mine(4)
          assert.isTrue(yield* watcher.step())
          assert.strictEqual(yield* cursor, head + 4 - 2)
        }),
      60_000
    )
  })
})
