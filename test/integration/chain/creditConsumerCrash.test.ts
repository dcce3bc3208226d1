import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Option } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCreditRelay } from "../../../services/chain/CreditRelay"
import { actorHostRuntime } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { privateNats } from "../../support/NatsServer"
import { seedDepositRequest } from "../../support/seedDepositRequest"

/**
 * Issue 20: a consumer instance SIGKILLed mid-batch loses nothing and applies nothing twice. Credits recorded in
 * PostgreSQL are published to JetStream; a child process consumes them (every partition under its lease) and is
 * killed while it holds delivered, unacknowledged messages; a second child takes the partitions over once the
 * leases lapse, JetStream delivers the unacknowledged messages again, and every credit counts exactly once.
 */
const REQUESTS = 40
const CREDITS_EACH = 25
const CHAIN_ID = 10143

let db: { url: string; drop: () => Promise<void> }
let nats: Awaited<ReturnType<typeof privateNats>>
let client: pg.Client
const children: Array<ChildProcess> = []

const startConsumer = () => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/support/creditConsumerChild.ts", db.url, nats.url],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  children.push(child)
  return child
}

const count = async (query: string) => Number((await client.query<{ n: string }>(query)).rows[0]?.n ?? 0)

beforeAll(async () => {
  db = await createTestDatabase()
  nats = await privateNats()
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
}, 60_000)
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  await client?.end()
  await nats?.stop()
  await db?.drop()
})

describe("a credit consumer killed mid-batch", () => {
  it("has its messages delivered again and applied once by the instance that takes over", async () => {
    const runtime = actorHostRuntime(db.url, { natsUrl: Option.some(nats.url) })
    try {
      const accountId = (await createMerchant(db.url)).accountId.slice(5)
      const ids: Array<string> = []
      for (let i = 0; i < REQUESTS; i++)
        ids.push(await runtime.runPromise(seedDepositRequest(accountId, "1000000")))
      // Credits recorded as the watcher records them, then published by the watcher's relay.
      const rows = ids.flatMap((id, r) =>
        Array.from({ length: CREDITS_EACH }, (_, k) => ({
          tx: `0x${randomBytes(32).toString("hex")}`,
          id,
          block: 1000 + k,
          log: r
        }))
      )
      await client.query(
        `insert into chain_credits (chain_id, tx_hash, log_index, block_number, block_hash, deposit_request_id,
                                    from_address, amount_base_units, seen_at)
         select $1, t, l, b, '0x' || md5(b::text), d, '0x1111111111111111111111111111111111111111', 7, now()
         from unnest($2::text[], $3::int[], $4::bigint[], $5::uuid[]) as x(t, l, b, d)`,
        [
          CHAIN_ID,
          rows.map((r) => r.tx),
          rows.map((r) => r.log),
          rows.map((r) => r.block),
          rows.map((r) => r.id)
        ]
      )
      const relay = await runtime.runPromise(makeCreditRelay(CHAIN_ID))
      let published = 0
      while (published < rows.length) published += await runtime.runPromise(relay.publishNew())
      expect(published).toBe(rows.length)

      const applied = () => count("select count(*) as n from chain_credits where applied_at is not null")
      const first = startConsumer()
      const deadline = Date.now() + 60_000
      while (Date.now() < deadline && (await applied()) === 0) await new Promise((r) => setTimeout(r, 5))
      first.kill("SIGKILL")
      await new Promise((r) => first.once("exit", r))
      const atKill = await applied()
      console.log(`killed the first consumer with ${atKill} of ${rows.length} credits applied`)
      expect(atKill).toBeGreaterThan(0)
      expect(atKill).toBeLessThan(rows.length)

      // The second takes the partitions over when the leases lapse; JetStream redelivers after the ack wait.
      startConsumer()
      const end = Date.now() + 90_000
      while (Date.now() < end && (await applied()) < rows.length) await new Promise((r) => setTimeout(r, 200))
      expect(await applied()).toBe(rows.length)
      const events = await count("select count(*) as n from applied_events where event_id like 'credit:%'")
      expect(events).toBe(rows.length)
      // Each request was stepped once per credit: its version moved by exactly its credits (it started at 1).
      const versions = await client.query<{ version: string }>(
        "select version::text from deposit_requests where id = any($1::uuid[])",
        [ids]
      )
      expect(versions.rows.map((r) => r.version)).toEqual(ids.map(() => String(1 + CREDITS_EACH)))
      console.log(
        `after the takeover: ${await applied()} credits applied, ${events} credit events, none twice`
      )
    } finally {
      await runtime.dispose()
    }
  }, 180_000)
})
