import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount, DEV_ACCOUNT } from "../../../infra/chain/Anvil"
import { formatAmount } from "../../../services/domain/Amount"
import { merchantClient } from "../../support/Api"
import { type ChainService, startChainService } from "../../support/ChainService"
import { createTestDatabase } from "../../support/Database"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"

/**
 * A token pause that outlasts the instance that saw it: the paid request waits `deposited` with nothing sent; the
 * instance stops; a new one on the same database and chain finds the settlement still waiting in the outbox, checks
 * the token again, sends nothing and reports the pause; once unpaused the settlement goes out by itself (no resume),
 * exactly once.
 */

let local: LocalChain
let database: { url: string; drop: () => Promise<void> }
/** The test's own connection: it outlives both instances. */
let db: pg.Client
const payer = anvilDevAccount(7)
const treasury = anvilDevAccount(DEV_ACCOUNT.treasury).address

beforeAll(async () => {
  ;[local, database] = await Promise.all([startLocalChain(), createTestDatabase()])
  db = new pg.Client({ connectionString: database.url })
  await db.connect()
}, 120_000)
afterAll(async () => {
  await db?.end().catch(() => undefined)
  await Promise.all([local?.node.stop(), database?.drop()])
})

interface View {
  readonly status: string
  readonly attention: unknown
}
interface Health {
  readonly token: { readonly paused: boolean; readonly checked_at: string } | null
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("a token paused across an instance restart", () => {
  it("holds the settlement in both instances and settles it once, by itself, after the unpause", async () => {
    const started = Date.now()
    const options = { mineWhileWaiting: true, service: { database } } as const
    let first: ChainService | undefined = await startChainService(local, options)
    let second: ChainService | undefined
    try {
      const { merchant } = first
      const api1 = merchantClient(first.service, merchant)
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const amount = 2_500_000n
      const { id, address } = await readyRequest(
        { service: first.service, api: api1, payer },
        formatAmount(amount),
        payout
      )
      const uuid = id.slice(3)
      await local.mint(payer.address, amount)
      const sent = await local.chain.getTransactionCount({ address: treasury })
      // Paid, then paused in the next block: the payment is not final yet (finalized = latest − 2), so the
      // treasury first sees the settlement with the token already paused.
      await local.pay(payer, address, amount)
      await local.controls.pause()

      const viewOf = async (api: ReturnType<typeof merchantClient>) =>
        (await api.call<View>("GET", `/v1/deposit-requests/${id}`)).body
      const transfersOf = async () =>
        (
          await db.query<{ state: string; amount_base_units: string; to_address: string }>(
            "select state, amount_base_units::text, to_address from transfers where deposit_request_id = $1",
            [uuid]
          )
        ).rows
      const tokenRow = async () =>
        (
          await db.query<{ paused: boolean; checked_at: Date }>(
            "select paused, checked_at from token_status where token = $1",
            [local.token.toLowerCase()]
          )
        ).rows[0]

      // First instance: deposited, the pause recorded, and several blocks and treasury passes with nothing sent.
      await local.mineUntil(
        async () => ((await viewOf(api1)).status === "deposited" ? true : undefined),
        45_000
      )
      await local.mineUntil(async () => ((await tokenRow())?.paused === true ? true : undefined), 30_000)
      for (let i = 0; i < 4; i++) {
        await local.chain.mine({ blocks: 2 })
        await sleep(700)
      }
      expect(await local.chain.getTransactionCount({ address: treasury })).toBe(sent)
      expect(await viewOf(api1)).toMatchObject({ status: "deposited", attention: null })
      expect(await transfersOf()).toEqual([])
      const outbox = await db.query<{ n: string }>(
        "select count(*)::text as n from outbox where deposit_request_id = $1 and payload->>'type' = 'settle' and published_at is null",
        [uuid]
      )
      expect(outbox.rows[0]?.n).toBe("1")

      // The instance stops while the token is still paused.
      await first.stop()
      first = undefined
      const stoppedAt = new Date()
      await local.chain.mine({ blocks: 3 })

      // A new instance on the same database and chain.
      second = await startChainService(local, options)
      const api2 = merchantClient(second.service, merchant)
      // Its treasury checks the token again (a fresh check, after the first instance stopped), and holds.
      await local.mineUntil(async () => {
        const row = await tokenRow()
        return row !== undefined && row.checked_at > stoppedAt ? row : undefined
      }, 45_000)
      for (let i = 0; i < 4; i++) {
        await local.chain.mine({ blocks: 2 })
        await sleep(700)
      }
      expect(await local.chain.getTransactionCount({ address: treasury })).toBe(sent)
      expect(await viewOf(api2)).toMatchObject({ status: "deposited", attention: null })
      expect(await transfersOf()).toEqual([])
      expect((await tokenRow())?.paused).toBe(true)
      const health = (await (await second.service.request("/v1/health")).json()) as Health
      expect(health.token?.paused).toBe(true)
      expect(await local.balanceOf(address)).toBe(amount)

      // Unpaused: no resume, the settlement leaves by itself, once.
      await local.controls.unpause()
      await local.mineUntil(
        async () => ((await viewOf(api2)).status === "settled" ? true : undefined),
        45_000
      )
      await local.mineUntil(
        async () => ((await transfersOf())[0]?.state === "confirmed" ? true : undefined),
        30_000
      )
      // A few more blocks and passes: nothing else goes out.
      for (let i = 0; i < 3; i++) {
        await local.chain.mine({ blocks: 2 })
        await sleep(500)
      }
      expect((await transfersOf()).map((t) => ({ ...t, to_address: t.to_address.toLowerCase() }))).toEqual([
        { state: "confirmed", amount_base_units: String(amount), to_address: payout.toLowerCase() }
      ])
      expect(await local.chain.getTransactionCount({ address: treasury })).toBe(sent + 1)
      expect(await local.balanceOf(payout)).toBe(amount)
      expect(await local.balanceOf(address)).toBe(0n)
      const held = await db.query("select 1 from held_transfers where deposit_request_id = $1", [uuid])
      expect(held.rowCount).toBe(0)
      await local.mineUntil(async () => {
        const after = (await (await second!.service.request("/v1/health")).json()) as Health
        return after.token?.paused === false ? true : undefined
      }, 30_000)
      process.stdout.write(`pause across a restart: settled once in ${Date.now() - started} ms\n`)
    } finally {
      await first?.stop()
      await second?.stop()
    }
  }, 120_000)
})
