import { Effect } from "effect"
import pg from "pg"
import { start, step } from "../../machines/step"
import { ActorHost } from "../../services/ActorHost"
import { actorHostRuntime } from "../support/ActorHostRuntime"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { seedDepositRequest } from "../support/seedDepositRequest"

/**
 * Issue 4 (b): events applied to persisted actors (lock, restore, transition, persist snapshot + dedupe + events
 * in one transaction) per second, beside the raw rate of single-row INSERT commits with `pg` on the same number of
 * connections, and the XState step alone in microseconds.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const WALLET = "0x1111111111111111111111111111111111111111"
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

const xstateAlone = () => {
  let s = start({
    id: "dr_bench",
    amount_base_units: "1000000000",
    payout_address: WALLET,
    payer_policy_mode: "none",
    expires_at: "2030-01-01T00:00:00Z",
    created_at: "2026-01-01T00:00:00Z"
  })
  s = step(s.snapshot, { type: "payer.wallet_attested", at: "x", wallet: WALLET, address: "0xaddr" })
  const persisted = JSON.parse(JSON.stringify(s.snapshot))
  const rounds: Array<number> = []
  for (let r = 0; r < 5; r++) {
    const n = 3000
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      step(persisted, {
        type: "deposit.credited",
        at: "x",
        credit_id: `c${i}`,
        amount_base_units: "1",
        from: WALLET
      })
    }
    rounds.push(((performance.now() - t0) * 1000) / n)
  }
  return median(rounds)
}

const rawInserts = async (url: string, connections: number) => {
  const pool = new pg.Pool({ connectionString: url, max: connections })
  await pool.query("create table if not exists bench_raw (id bigserial primary key, payload jsonb not null)")
  let done = 0
  const deadline = Date.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        await pool.query("insert into bench_raw (payload) values ($1)", [{ n: done }])
        done++
      }
    })
  )
  await pool.end()
  return done / seconds
}

export async function run() {
  const micro = xstateAlone()
  const db = await createTestDatabase()
  const connections = 8
  try {
    const raw = await rawInserts(db.url, connections)
    const runtime = actorHostRuntime(db.url)
    const accountId = (await createMerchant(db.url)).accountId.slice(5)
    // Many actors with a few events each, as in production (a request sees a handful of events), spread over
    // the connections so writers do not queue on one row lock.
    const actorsPerConnection = 40
    const ids: Array<string> = []
    for (let i = 0; i < connections * actorsPerConnection; i++) {
      const id = await runtime.runPromise(seedDepositRequest(accountId, "1000000000000"))
      await runtime.runPromise(
        Effect.flatMap(ActorHost, (h) =>
          h.apply(id, "attest", {
            type: "payer.wallet_attested",
            at: new Date().toISOString(),
            wallet: WALLET,
            address: `0x${id.replaceAll("-", "").padEnd(40, "0")}`
          })
        )
      )
      ids.push(id)
    }
    let applied = 0
    const latencies: Array<number> = []
    const deadline = Date.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: connections }, async (_, lane) => {
        const own = ids.slice(lane * actorsPerConnection, (lane + 1) * actorsPerConnection)
        let i = 0
        while (Date.now() < deadline) {
          const id = own[i % own.length]!
          const t0 = performance.now()
          await runtime.runPromise(
            Effect.flatMap(ActorHost, (h) =>
              h.apply(id, `credit-${i}`, {
                type: "deposit.credited",
                at: new Date().toISOString(),
                credit_id: `c${i}`,
                amount_base_units: "1",
                from: WALLET
              })
            )
          )
          latencies.push(performance.now() - t0)
          i++
          applied++
        }
      })
    )
    await runtime.dispose()
    const rate = applied / seconds
    const sorted = latencies.sort((a, b) => a - b)
    const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0
    process.stdout.write(
      [
        "",
        "actors: events applied to persisted actors (320 actors, 8 writers, real PostgreSQL)",
        `  raw single-row INSERT commits (pg, 8 connections): ${raw.toFixed(0)}/s`,
        `  events applied (lock, restore, transition, persist, dedupe, events): ${rate.toFixed(0)}/s  p50 ${p(0.5).toFixed(2)} ms  p99 ${p(0.99).toFixed(2)} ms`,
        `  ratio events/raw inserts: ${(rate / raw).toFixed(2)}x`,
        `  XState step alone (restore + transition + persisted snapshot): ${micro.toFixed(1)} µs per event (target < 200 µs)`,
        ""
      ].join("\n")
    )
  } finally {
    await db.drop()
  }
}
