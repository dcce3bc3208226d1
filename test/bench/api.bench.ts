import pg from "pg"
import { httpTarget } from "../support/Service"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { measureAll, printRatio, printTable, recordFigure, serviceNodeFlags, withServers } from "./harness"

/**
 * Authenticated API routes against the bare Effect endpoint, in one run, at 32 connections:
 * - issue 3: `GET /v1/account` with an API key (digest look-up plus the shared rate-limit bucket); target ≥ 0.5×
 *   the bare Effect endpoint with p99 under 50 ms;
 * - issue 4 (a): `POST /v1/deposit-requests`, each with a fresh Idempotency-Key (so each one creates); target
 *   ≥ 0.35× the bare Effect endpoint; beside single-row INSERT commits with `pg` on 8 connections, and the bare
 *   Effect server decoding the same body and encoding the same answer schema with no work (what the framework
 *   alone costs for a create's shape).
 * Each row also shows the server's CPU time per request (from /proc), steadier than req/s on a shared machine.
 */
const CONNECTIONS = 32

const rawInsertRate = async (url: string, seconds: number) => {
  const pool = new pg.Pool({ connectionString: url, max: 8 })
  // The database is dropped (connections terminated) right after: an idle client's error then is expected.
  pool.on("error", () => {})
  await pool.query("create table if not exists bench_raw (id bigserial primary key, payload jsonb not null)")
  let done = 0
  const deadline = Date.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < deadline) {
        await pool.query("insert into bench_raw (payload) values ($1)", [{ n: done }])
        done++
      }
    })
  )
  await pool.end()
  return done / seconds
}

export async function run(): Promise<void> {
  const db = await createTestDatabase()
  try {
    process.stdout.write(
      `\n== api: authenticated GET /v1/account and POST /v1/deposit-requests at ${CONNECTIONS} connections\n`
    )
    const merchant = await createMerchant(db.url)
    const rows = await withServers(
      [
        { name: "bareEffect", script: "servers/bareEffect.ts" },
        {
          name: "service",
          script: "servers/serviceOnDatabase.ts",
          env: { BENCH_DATABASE_URL: db.url },
          nodeArgs: serviceNodeFlags()
        }
      ],
      async (servers) => {
        const service = servers.service!
        const client = merchantClient(httpTarget(service.baseUrl), merchant)
        const refs = await client.setup()
        const auth = { authorization: `Bearer ${merchant.apiKey}` }
        return measureAll([
          {
            name: "bareEffect",
            url: `${servers.bareEffect!.baseUrl}/noop`,
            connections: CONNECTIONS,
            server: servers.bareEffect!
          },
          {
            name: "bareEffect POST create-shaped",
            url: `${servers.bareEffect!.baseUrl}/create-shaped`,
            connections: CONNECTIONS,
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              amount: "12.500000",
              issuer_id: refs.issuerId,
              payout_address_id: refs.payoutAddressId
            }),
            server: servers.bareEffect!
          },
          {
            name: "GET /v1/account",
            url: `${service.baseUrl}/v1/account`,
            connections: CONNECTIONS,
            headers: auth,
            server: service
          },
          {
            name: "POST /v1/deposit-requests",
            url: `${service.baseUrl}/v1/deposit-requests`,
            connections: CONNECTIONS,
            method: "POST",
            headers: { ...auth, "content-type": "application/json" },
            body: JSON.stringify({
              amount: "12.500000",
              issuer_id: refs.issuerId,
              payout_address_id: refs.payoutAddressId
            }),
            uniqueHeader: "idempotency-key",
            server: service
          }
        ])
      }
    )
    printTable(rows, "bareEffect")
    const account = printRatio(rows, "GET /v1/account", "bareEffect")
    const create = printRatio(rows, "POST /v1/deposit-requests", "bareEffect")
    printRatio(rows, "bareEffect POST create-shaped", "bareEffect")
    printRatio(rows, "POST /v1/deposit-requests", "bareEffect POST create-shaped")
    const p99 = rows.find((r) => r.name === "GET /v1/account")?.p99 ?? Number.NaN
    const raw = await rawInsertRate(db.url, 5)
    const creates = rows.find((r) => r.name === "POST /v1/deposit-requests")?.reqPerSec ?? 0
    const bare = {
      name: "bare Effect HttpApi no-op",
      value: rows.find((r) => r.name === "bareEffect")?.reqPerSec ?? Number.NaN,
      unit: "req/s"
    }
    recordFigure({
      figure: `GET /v1/account with an API key, ${CONNECTIONS} connections`,
      value: rows.find((r) => r.name === "GET /v1/account")?.reqPerSec ?? Number.NaN,
      unit: "req/s",
      target: "≥ 0.5× baseline",
      met: account >= 0.5,
      baseline: bare,
      ratio: account
    })
    recordFigure({
      figure: "GET /v1/account p99",
      value: p99,
      unit: "ms",
      target: "< 50 ms",
      met: p99 < 50
    })
    recordFigure({
      figure: `POST /v1/deposit-requests (a fresh Idempotency-Key each), ${CONNECTIONS} connections`,
      value: creates,
      unit: "req/s",
      target: "≥ 0.35× baseline",
      met: create >= 0.35,
      baseline: bare,
      ratio: create
    })
    process.stdout.write(
      [
        `raw single-row INSERT commits (pg, 8 connections): ${raw.toFixed(0)}/s; creates / raw inserts = ${(creates / raw).toFixed(3)}`,
        `target GET /v1/account ≥ 0.5 × bareEffect and p99 < 50 ms: ${account >= 0.5 && p99 < 50 ? "met" : "NOT met"} (${account.toFixed(2)}, p99 ${p99.toFixed(1)} ms)`,
        `target POST /v1/deposit-requests ≥ 0.35 × bareEffect: ${create >= 0.35 ? "met" : "NOT met"} (${create.toFixed(2)})`,
        ""
      ].join("\n")
    )
    for (const r of rows.filter((r) => r.non2xx + r.errors > 0)) {
      process.stdout.write(`warning: ${r.name} had ${r.non2xx} non-2xx, ${r.errors} errors\n`)
    }
  } finally {
    await db.drop()
  }
}
