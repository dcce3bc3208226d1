import { createHash, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { merchantClient } from "../../support/Api"
import { createTestDatabase } from "../../support/Database"
import { createMerchant } from "../../support/Merchant"
import { serviceNodeFlags, spawnService } from "../../support/Process"
import { sampleRss } from "../../support/RssSampler"

/**
 * Issue 50: the CSV export streams with the service's memory flat (infra/decisions/0103-export-memory-flat.md).
 * A service spawned as `npm start` runs it (its node flags read from package.json) exports a few hundred thousand
 * requests while this process samples its RSS from /proc; past the first quarter of the export the RSS may not
 * rise by more than a small bound, whatever the row count, and the body holds every request once.
 */
const ROWS = 300_000
/** The rise allowed from the first quarter of the export to its end. */
const FLAT_MIB = 32

const mib = (bytes: number) => bytes / 1024 / 1024

describe("an export of 300,000 requests from a spawned service", () => {
  it("keeps the server's RSS flat and writes every request once", async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), "export-memory-"))
    const db = new pg.Client({ connectionString: database.url })
    let service: Awaited<ReturnType<typeof spawnService>> | undefined
    try {
      service = await spawnService(
        { DATABASE_URL: database.url, DATA_DIR: dataDir, RATE_LIMIT_CAPACITY: "10000" },
        120_000,
        [...serviceNodeFlags(), "--import", "tsx", "src/app/main.ts"]
      )
      const baseUrl = service.baseUrl
      const owner = await createMerchant(database.url)
      const api = merchantClient({ baseUrl, request: (p, i) => fetch(`${baseUrl}${p}`, i) }, owner)
      const refs = await api.setup()
      const made = await api.call(
        "POST",
        "/v1/deposit-requests",
        { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
        { "idempotency-key": randomUUID() }
      )
      expect(made.status).toBe(201)
      await db.connect()
      // Copies of the request made through the API, with the service idle meanwhile (as a merchant's export
      // usually finds it).
      await db.query(
        `insert into deposit_requests (id, account_id, status, version, machine_version, snapshot, amount_base_units,
           heading, reference, metadata, issuer_id, payout_address_id, payer_policy_mode, expires_at, created_at,
           updated_at)
         select gen_random_uuid(), s.account_id, s.status, 1, s.machine_version, s.snapshot, 1000000 + g, '',
           'bulk-' || g, '{}', s.issuer_id, s.payout_address_id, s.payer_policy_mode, s.expires_at,
           now() - interval '10 days' + g * interval '1 second', now()
         from deposit_requests s, generate_series(1, $1::int) g`,
        [ROWS - 1]
      )
      await db.query("analyze deposit_requests")
      const expected = (
        await db.query<{ n: string; digest: string }>(
          `select count(*) as n, md5(string_agg(id::text, ',' order by id::text collate "C")) as digest from deposit_requests`
        )
      ).rows[0]!
      expect(Number(expected.n)).toBe(ROWS)

      const pid = service.child.pid!
      const res = await fetch(`${baseUrl}/v1/deposit-requests/export.csv`, {
        headers: owner.headers("api_key")
      })
      expect(res.status).toBe(200)
      const sampler = sampleRss(pid)
      const started = performance.now()
      // Ids only: the first field of each line (`dr_<uuid>`, never quoted), the header's first.
      const ids: Array<string> = []
      let pending = ""
      const decoder = new TextDecoder()
      for await (const bytes of res.body!) {
        const lines = (pending + decoder.decode(bytes, { stream: true })).split("\r\n")
        pending = lines.pop()!
        for (const line of lines) ids.push(line.slice(0, line.indexOf(",")))
      }
      const seconds = (performance.now() - started) / 1000
      const rss = sampler.stop()
      expect(pending).toBe("")
      expect(ids.shift()).toBe("id")

      const rise = Math.max(...rss.samples.slice(Math.floor(rss.samples.length * 0.25))) - rss.at(0.25)
      console.log(
        `export of ${ids.length} rows in ${seconds.toFixed(1)} s (${Math.round(ids.length / seconds)} rows/s); ` +
          `server RSS ${mib(rss.first).toFixed(0)} MiB at the start, ` +
          `${[0.25, 0.5, 0.75, 1].map((q) => mib(rss.at(q)).toFixed(0)).join(" / ")} MiB at 25/50/75/100 %, ` +
          `peak ${mib(rss.peak).toFixed(0)} MiB; rise after 25 %: ${mib(rise).toFixed(1)} MiB (${rss.samples.length} samples)`
      )

      // Every request once: as many lines as requests, no id twice, and the same ids as the table.
      expect(ids.length).toBe(ROWS)
      expect(new Set(ids).size).toBe(ROWS)
      const uuids = ids.map((id) => id.slice("dr_".length)).sort()
      expect(createHash("md5").update(uuids.join(",")).digest("hex")).toBe(expected.digest)

      expect(rss.samples.length).toBeGreaterThanOrEqual(20)
      expect(mib(rise)).toBeLessThan(FLAT_MIB)
    } finally {
      await db.end().catch(() => undefined)
      await service?.stop()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 180_000)
})
