import { Schema } from "effect"
import pg from "pg"
import { CreateDepositRequest, CreatedDepositRequest } from "../../src/http/DepositRequests/Api"
import { httpTarget } from "../support/Service"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { created } from "./servers/createdAnswer"
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

/**
 * What the framework's schemas alone cost per create, in this process (µs, median of rounds): the payload's
 * JSON parse and decode as `HttpApiBuilder` does it, and the answer's encode and JSON. The service's route and the
 * bare create-shaped POST pay both alike, with the same schemas.
 */
const createSchemaMicros = (body: string) => {
  const decode = Schema.decodeUnknownSync(CreateDepositRequest)
  const encode = Schema.encodeSync(CreatedDepositRequest)
  const time = (f: () => unknown) => {
    const samples: Array<number> = []
    for (let r = 0; r < 7; r++) {
      const n = 2000
      const t0 = performance.now()
      for (let i = 0; i < n; i++) f()
      samples.push(((performance.now() - t0) * 1000) / n)
    }
    return samples.sort((a, b) => a - b)[3]!
  }
  return {
    decode: time(() => decode(JSON.parse(body))),
    encode: time(() => JSON.stringify(encode(created)))
  }
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
    // Where a create's server CPU goes: the bare no-op, what the framework adds for a create's body and answer
    // (the bare create-shaped POST), and what is ours beyond that.
    const cpuOf = (name: string) => rows.find((r) => r.name === name)?.cpuUsPerRequest ?? Number.NaN
    const cpuBare = cpuOf("bareEffect")
    const cpuShaped = cpuOf("bareEffect POST create-shaped")
    const cpuCreate = cpuOf("POST /v1/deposit-requests")
    const schemas = createSchemaMicros(
      JSON.stringify({
        amount: "12.500000",
        issuer_id: created.issuer_id,
        payout_address_id: created.payout_address_id
      })
    )
    process.stdout.write(
      `server CPU per create: ${cpuCreate.toFixed(0)} µs = bare no-op ${cpuBare.toFixed(0)} + the framework's create shape ${(cpuShaped - cpuBare).toFixed(0)} (bare create-shaped POST ${cpuShaped.toFixed(0)}; its schemas alone in process: decode ${schemas.decode.toFixed(1)} µs, encode ${schemas.encode.toFixed(1)} µs) + ours ${(cpuCreate - cpuShaped).toFixed(0)}; the framework's share ${((100 * cpuShaped) / cpuCreate).toFixed(0)} %\n`
    )
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
    recordFigure({
      figure:
        "server CPU per create beyond the bare create-shaped POST (ours: auth, key, group commit, answer)",
      value: cpuCreate - cpuShaped,
      unit: "µs",
      target: "—",
      baseline: { name: "bare create-shaped POST's server CPU", value: cpuShaped, unit: "µs" },
      ratio: cpuCreate / cpuShaped
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
