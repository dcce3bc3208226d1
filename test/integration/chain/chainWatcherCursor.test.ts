import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeChainWatcher } from "../../../services/chain/ChainWatcher"
import { actorHostRuntime } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { chainAccessOf, type LocalChain, startLocalChain } from "../../support/LocalChain"

let local: LocalChain
let database: Awaited<ReturnType<typeof createTestDatabase>>
let runtime: ReturnType<typeof actorHostRuntime>
let db: pg.Client

beforeAll(async () => {
  local = await startLocalChain()
  database = await createTestDatabase()
  runtime = actorHostRuntime(database.url)
  db = new pg.Client({ connectionString: database.url })
  await db.connect()
}, 60_000)
afterAll(async () => {
  await db?.end()
  await runtime?.dispose()
  await database?.drop()
  await local?.node.stop()
})

const cursorIn = async (client: pg.Client) =>
  Number(
    (await client.query<{ last_block: string }>("select last_block::text from chain_cursors")).rows[0]
      ?.last_block
  )
const cursor = () => cursorIn(db)
const finalized = async () => Number((await local.chain.getBlock({ blockTag: "finalized" })).number)

describe("finality by confirmations (CHAIN_FINALITY=3)", () => {
  it("reads up to the block 3 deep, while the node's finalized tag is far behind", async () => {
    // A chain whose `finalized` tag lags 64 blocks: with confirmations the watcher does not wait for it.
    const slow = await startLocalChain({ slotsInAnEpoch: 32 })
    const other = await createTestDatabase()
    const confirmations = actorHostRuntime(other.url, { chainFinality: { _tag: "Confirmations", n: 3 } })
    try {
      await slow.chain.mine({ blocks: 10 })
      const watcher = await confirmations.runPromise(
        makeChainWatcher(chainAccessOf(slow.node.rpcUrl), slow.token)
      )
      await confirmations.runPromise(watcher.step())
      const latest = Number(await slow.chain.getBlockNumber())
      const c = new pg.Client({ connectionString: other.url })
      await c.connect()
      expect(await cursorIn(c)).toBe(latest - 2)
      expect(Number((await slow.chain.getBlock({ blockTag: "finalized" })).number)).toBeLessThan(latest - 2)
      await slow.chain.mine({ blocks: 4 })
      expect(await confirmations.runPromise(watcher.step())).toBe(true)
      expect(await cursorIn(c)).toBe(latest + 4 - 2)
      await c.end()
    } finally {
      await confirmations.dispose()
      await other.drop()
      await slow.node.stop()
    }
  }, 60_000)
})

describe("the watcher's cursor", () => {
  it("moves only from where the instance read it: a stale instance records nothing and reads it again", async () => {
    const first = await runtime.runPromise(makeChainWatcher(chainAccessOf(local.node.rpcUrl), local.token))
    const stale = await runtime.runPromise(makeChainWatcher(chainAccessOf(local.node.rpcUrl), local.token))
    await local.chain.mine({ blocks: 3 })
    // The first step of each places or reads the cursor at the finalized block: nothing to read yet.
    expect(await runtime.runPromise(first.step())).toBe(false)
    expect(await runtime.runPromise(stale.step())).toBe(false)
    const placed = await cursor()
    expect(placed).toBe(await finalized())

    await local.chain.mine({ blocks: 2 })
    expect(await runtime.runPromise(first.step())).toBe(true)
    expect(await cursor()).toBe(placed + 2)

    // The other instance still holds the old cursor: its compare-and-set fails and it moves nothing.
    await local.chain.mine({ blocks: 1 })
    expect(await runtime.runPromise(stale.step())).toBe(false)
    expect(await cursor()).toBe(placed + 2)
    // Next step it reads the cursor again and carries on from there.
    expect(await runtime.runPromise(stale.step())).toBe(true)
    expect(await cursor()).toBe(placed + 3)
    // And now the first one is the stale one.
    await local.chain.mine({ blocks: 1 })
    expect(await runtime.runPromise(first.step())).toBe(false)
    expect(await cursor()).toBe(placed + 3)
  })
})
