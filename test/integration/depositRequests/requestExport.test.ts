import { randomUUID } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csvLine, REQUEST_COLUMNS, requestRow } from "../../../services/depositRequests/RequestCsv"
import { merchantClient } from "../../support/Api"
import { createMerchant, type Merchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

/**
 * `GET /v1/deposit-requests/export.csv` (issue 50, item 4): the server streams every request the list's filters
 * select, newest first, the rows equal to the list's, formulas defused; the key and a session both export, nobody
 * else.
 */

type ListItem = Parameters<typeof requestRow>[0] & { readonly id: string }

let running: RunningService
let merchant: Merchant
let db: pg.Client

/** Bulk rows cloned from one request of the account, references numbered, created a second apart. */
const bulk = (client: pg.Client, sourceUuid: string, n: number, status = "awaiting_payer") =>
  client.query(
    `insert into deposit_requests (id, account_id, status, version, machine_version, snapshot, amount_base_units,
       heading, reference, metadata, issuer_id, payout_address_id, payer_policy_mode, expires_at, created_at,
       updated_at)
     select gen_random_uuid(), s.account_id, $3, 1, s.machine_version, s.snapshot, 1000000 + g, '', 'bulk-' || g,
       '{}', s.issuer_id, s.payout_address_id, s.payer_policy_mode, s.expires_at,
       now() - interval '10 days' + g * interval '1 second', now()
     from deposit_requests s, generate_series(1, $2::int) g where s.id = $1`,
    [sourceUuid, n, status]
  )

/** The records of a CSV body (a CRLF inside quotes is not a record's end). */
const records = (text: string) => {
  const out: Array<string> = []
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted
    else if (text[i] === "\n" && !quoted) {
      out.push(text.slice(start, i + 1))
      start = i + 1
    }
  }
  expect(start).toBe(text.length)
  return out
}

const walkList = async (query = "") => {
  const api = merchantClient(running, merchant)
  const items: Array<ListItem> = []
  let cursor: string | null = null
  do {
    const page: { status: number; body: { deposit_requests: Array<ListItem>; next_cursor: string | null } } =
      await api.call(
        "GET",
        `/v1/deposit-requests?limit=100${query}${cursor === null ? "" : `&starting_after=${cursor}`}`
      )
    expect(page.status).toBe(200)
    items.push(...page.body.deposit_requests)
    cursor = page.body.next_cursor
  } while (cursor !== null)
  return items
}

beforeAll(async () => {
  running = await startService({ config: { rateLimitCapacity: 10_000 } })
  merchant = await createMerchant(running.databaseUrl)
  db = new pg.Client({ connectionString: running.databaseUrl })
  await db.connect()
  const api = merchantClient(running, merchant)
  const refs = await api.setup()
  for (const reference of ['=HYPERLINK("http://x")', 'a,"quoted"\r\nline', "plain"]) {
    const made = await api.call<{ id: string }>(
      "POST",
      "/v1/deposit-requests",
      {
        amount: "2.500000",
        issuer_id: refs.issuerId,
        payout_address_id: refs.payoutAddressId,
        reference,
        metadata: { k: "@v" }
      },
      { "idempotency-key": randomUUID() }
    )
    expect(made.status).toBe(201)
  }
  const source = (await db.query<{ id: string }>("select id from deposit_requests limit 1")).rows[0]!.id
  await bulk(db, source, 1_200)
  await bulk(db, source, 30, "expired")
}, 60_000)

afterAll(async () => {
  await db?.end()
  await running?.stop()
})

describe("GET /v1/deposit-requests/export.csv", () => {
  it("streams every request as the list shows it, newest first, formulas defused", async () => {
    const res = await running.request("/v1/deposit-requests/export.csv", {
      headers: merchant.headers("api_key")
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="deposit-requests-/)
    const lines = records(await res.text())
    const list = await walkList()
    expect(lines.length).toBe(list.length + 1)
    expect(list.length).toBe(1_233)
    expect(lines[0]).toBe(csvLine(REQUEST_COLUMNS))
    expect(lines.slice(1)).toEqual(list.map((r) => csvLine(requestRow(r, []))))
    const text = lines.join("")
    expect(text).toContain(`,"'=HYPERLINK(""http://x"")",`)
    expect(text).toContain(`,"a,""quoted""\r\nline",`)
    expect(text).toContain(`"{""k"":""@v""}"`)
  })

  it("takes the list's filters, and a dashboard session as well as the key; nobody else", async () => {
    const res = await running.request("/v1/deposit-requests/export.csv?status=expired", {
      headers: merchant.headers("session")
    })
    expect(res.status).toBe(200)
    const lines = records(await res.text()).slice(1)
    const list = await walkList("&status=expired")
    expect(lines).toEqual(list.map((r) => csvLine(requestRow(r, []))))
    expect(lines.length).toBe(30)
    expect((await running.request("/v1/deposit-requests/export.csv")).status).toBe(401)
    const bad = await running.request("/v1/deposit-requests/export.csv?status=nope", {
      headers: merchant.headers("api_key")
    })
    expect(bad.status).toBe(400)
  })

  it("lists each request's transaction hashes in time order, and only its own", async () => {
    const [a, b] = (
      await db.query<{ id: string }>("select id from deposit_requests where status = 'expired' limit 2")
    ).rows.map((r) => r.id)
    const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
    for (const [request, n, minutes] of [
      [a, 3, 1],
      [a, 1, 5],
      [b, 2, 2]
    ] as const)
      await db.query(
        `insert into chain_credits (chain_id, tx_hash, log_index, block_number, block_hash, deposit_request_id,
           from_address, amount_base_units, seen_at, applied_at, published_at)
         values (31337, $1, 0, 1, $1, $2, '0x52908400098527886e0f7030069857d2e4169ee7', 1,
           now() - make_interval(mins => $3), now(), now())`,
        [hash(n), request, minutes]
      )
    const res = await running.request("/v1/deposit-requests/export.csv?status=expired", {
      headers: merchant.headers("api_key")
    })
    const lines = records(await res.text())
    const lineOf = (uuid: string) => lines.find((l) => l.startsWith(`dr_${uuid},`)) ?? ""
    // Oldest first: the credit seen 5 minutes ago, then the one seen a minute ago.
    expect(lineOf(a!)).toContain(`,${hash(1)} ${hash(3)},`)
    expect(lineOf(b!)).toContain(`,${hash(2)},`)
  })
})
