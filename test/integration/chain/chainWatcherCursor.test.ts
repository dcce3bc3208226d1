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
const mine = (blocks: number) =>
  Effect.flatMap(ChainFixture, ({ local }) => Effect.promise(() => local.chain.mine({ blocks })))
const watcherOnTheChain = Effect.flatMap(ChainFixture, ({ local }) =>
  makeChainWatcher(chainAccessOf(local.node.rpcUrl), local.token)
)

describe("the watcher's cursor", () => {
  it.layer(chainFixture(), { timeout: 60_000 })((it) => {
    it.effect(
      "moves only from where the instance read it: a stale instance records nothing and reads it again",
      () =>
        Effect.gen(function* () {
          const first = yield* watcherOnTheChain
          const stale = yield* watcherOnTheChain
          yield* mine(3)
          // The first step of each places or reads the cursor at the finalized block: nothing to read yet.
          assert.isFalse(yield* first.step())
          assert.isFalse(yield* stale.step())
          const placed = yield* cursor
          assert.strictEqual(placed, yield* finalized)

          yield* mine(2)
          assert.isTrue(yield* first.step())
          assert.strictEqual(yield* cursor, placed + 2)

          // The other instance still holds the old cursor: its compare-and-set fails and it moves nothing.
          yield* mine(1)
          assert.isFalse(yield* stale.step())
          assert.strictEqual(yield* cursor, placed + 2)
          // Next step it reads the cursor again and carries on from there.
          assert.isTrue(yield* stale.step())
          assert.strictEqual(yield* cursor, placed + 3)
          // And now the first one is the stale one.
          yield* mine(1)
          assert.isFalse(yield* first.step())
          assert.strictEqual(yield* cursor, placed + 3)
        })
    )
  })
})
