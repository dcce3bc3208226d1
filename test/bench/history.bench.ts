import { randomUUID } from "node:crypto"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { depositRequestStatuses } from "../../services/domain/Lifecycle"
import { toId } from "../../services/domain/PrefixedId"
import { type MerchantClient, merchantClient } from "../support/Api"
import { type ChainService, startChainService } from "../support/ChainService"
import { fillHistory } from "../support/historyFill"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { createMerchant, type Merchant } from "../support/Merchant"
import { readyRequest } from "../support/Payer"
import { sampleRss } from "../support/RssSampler"
import { recordFigure } from "./harness"

/**
 * Issue 50: every merchant read the API and the dashboard make, on an account with a long history beside the same
 * read on an account of 100 requests, in one run against one service (real PostgreSQL, NATS, the local chain).
 *
 * Each account first gets requests made through the API, paid on the chain (overpaid, so the service settles and
 * returns the remainder: credits, transfers, a recovery, events) and given a customer and a reference; one of them
 * is then copied in SQL (`test/support/historyFill.ts`) until the account holds its size, with events, credits,
 * transfers, bound wallets and webhook deliveries, spread over a year. Then, after `ANALYZE`, each read is timed
 * from this process as sequential GETs, the two accounts interleaved read by read, and the median is recorded
 * beside the small account's. Target (issue 50): at 2,000,000 requests, every read ≤ 2× its 100-request figure and
 * ≤ 50 ms. The reconciliation report walked by pages and the CSV export streamed whole are timed per 10,000 rows
 * (`reportAndExport`), and the process's RSS is sampled through the export.
 *
 * Knobs: BENCH_HISTORY_REQUESTS (the large account's size, default 2,000,000; 20000 for a short run),
 * BENCH_HISTORY_SAMPLES (timed calls per read and account, default 25), BENCH_HISTORY_PAID (requests paid on the
 * chain per account, default 2), BENCH_HISTORY_REPORT_ROWS (rows of the reconciliation report walked on the large
 * account, default 20,000; the export always streams every row).
 */
const LARGE = Number(process.env.BENCH_HISTORY_REQUESTS ?? 2_000_000)
const SMALL = 100
const SAMPLES = Math.max(3, Number(process.env.BENCH_HISTORY_SAMPLES ?? 25))
const PAID = Math.max(1, Number(process.env.BENCH_HISTORY_PAID ?? 2))
const REPORT_ROWS = Number(process.env.BENCH_HISTORY_REPORT_ROWS ?? 20_000)
/** What "flat" allows the export's RSS to grow once a quarter of it is out (allocator noise, not rows). */
const RSS_FLAT_MIB = 32
const TARGET_MS = 50
const DAY_MS = 86_400_000

const out = (line: string) => process.stdout.write(`${line}\n`)
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Account {
  readonly label: string
  readonly accountId: string
  readonly api: MerchantClient
  /** A GET as this account's merchant, the answer unread (for the streamed export). */
  readonly raw: (path: string) => Promise<Response>
  /** Identifiers of one request far back (about 100 days), with every kind of row. */
  readonly sample: Record<string, string>
  readonly endpointId: string
}

/** One request paid through the chain, overpaid so the remainder is returned: settled with a recovery. */
const payOverpaid = async (
  local: LocalChain,
  running: ChainService,
  api: MerchantClient,
  payerIndex: number
) => {
  const payer = anvilDevAccount(payerIndex)
  const units = 2_000_000n
  const request = await readyRequest(
    { service: running.service, api, payer },
    "2.000000",
    privateKeyToAccount(generatePrivateKey()).address
  )
  await local.mint(payer.address, units + 250_000n)
  await local.pay(payer, request.address, units + 250_000n)
  for (let i = 0; i < 600; i++) {
    const r = await api.call<{ recoveries: Array<unknown> }>(
      "GET",
      `/v1/deposit-requests/${request.id}/recoveries`
    )
    const s = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${request.id}`)
    if (s.body.status === "settled" && r.body.recoveries.length > 0) return request.id
    await sleep(200)
  }
  throw new Error(`${request.id} was not settled with its remainder returned`)
}

/** An account of `size` requests: paid ones through the API, the rest copied from the first in SQL. */
const makeAccount = async (
  label: string,
  size: number,
  salt: number,
  local: LocalChain,
  running: ChainService,
  merchant: Merchant,
  accountId: string,
  payerBase: number
): Promise<Account> => {
  const api = merchantClient(running.service, merchant)
  const db = running.db
  const customer = await api.call<{ id: string }>("POST", "/v1/customers", {
    name: `${label} customer`,
    email: `${label}@example.com`
  })
  const paid: Array<string> = []
  for (let i = 0; i < PAID; i++) paid.push(await payOverpaid(local, running, api, payerBase + i))
  const template = paid[0]!
  await api.call("PATCH", `/v1/deposit-requests/${template}`, {
    customer_id: customer.body.id,
    reference: `${label}-template`
  })
  // A webhook endpoint whose delivery log the copies fill (a URL outside: the service never calls it here).
  const endpointId = randomUUID()
  await db.query(
    `insert into webhook_endpoints (id, account_id, url, secret, created_at, event_types)
     values ($1, $2, 'https://hooks.example.test/history', 'whsec_history', now(), array['webhook.test'])`,
    [endpointId, accountId]
  )
  const started = Date.now()
  let reported = 0
  await fillHistory(db, {
    accountId,
    templateId: template.slice("dr_".length),
    count: size - PAID,
    salt,
    endpointId,
    progress: (done) => {
      if (done - reported >= 200_000 || done === size - PAID) {
        reported = done
        out(`  ${label}: ${done} copies in ${((Date.now() - started) / 1000).toFixed(0)} s`)
      }
    }
  })
  // Statistics first: a plan made before them over millions of fresh rows can take minutes.
  await db.query("analyze")
  // A copy far back with every kind of row, found from the newest before the cut by index probes per request.
  const r = (
    await db.query(
      `select d.id, d.deposit_address, d.customer_id, d.issuer_id, d.payout_address_id, d.created_at,
         v.id as attempt_id, v.wallet, t.tx_hash, w.id as delivery_id, w.event_id, a.attachment_id,
         (select reference from deposit_requests where account_id = $1 and reference like 'order-%'
           order by created_at desc limit 1) as reference,
         (select expected_email from deposit_requests where account_id = $1 and expected_email is not null
           order by created_at desc limit 1) as email
       from (select * from deposit_requests where account_id = $1
               and created_at < now() - interval '${Math.min(100, Math.floor(size / 2000))} days'
             order by created_at desc, id desc limit 400) d
       join lateral (select id, wallet from verification_attempts
         where deposit_request_id = d.id limit 1) v on true
       join lateral (select tx_hash from transfers where deposit_request_id = d.id and kind = 'settle' limit 1) t on true
       join lateral (select w.id, w.event_id from lifecycle_events e join webhook_deliveries w on w.event_id = e.id
         where e.deposit_request_id = d.id limit 1) w on true
       join lateral (select attachment_id from deposit_request_attachments
         where deposit_request_id = d.id limit 1) a on true
       order by d.created_at desc, d.id desc limit 1`,
      [accountId]
    )
  ).rows[0]
  if (r === undefined) throw new Error(`${label}: no sample request`)
  // The reconciliation report pages oldest first: a page "far back" starts at the sample when a full page follows
  // it, else (a small account) at its oldest request, so both accounts time a page of about 100 rows.
  const following = (
    await db.query(
      `select count(*)::int as n from (select 1 from deposit_requests where account_id = $1
         and (created_at, id) > ($2, $3) limit 100) x`,
      [accountId, r.created_at, r.id]
    )
  ).rows[0].n as number
  const reportCursor =
    following >= 100
      ? r.id
      : (
          await db.query(
            "select id from deposit_requests where account_id = $1 order by created_at, id limit 1",
            [accountId]
          )
        ).rows[0].id
  return {
    label,
    accountId,
    api,
    raw: (path) => running.service.request(path, { headers: merchant.headers("api_key") }),
    endpointId,
    sample: {
      id: toId("dr", r.id),
      depositAddress: r.deposit_address,
      customer: toId("cus", r.customer_id),
      issuer: toId("iss", r.issuer_id),
      payout: toId("pa", r.payout_address_id),
      attempt: toId("va", r.attempt_id),
      attachment: toId("att", r.attachment_id),
      wallet: r.wallet,
      txHash: r.tx_hash,
      event: toId("evt", r.event_id),
      delivery: toId("whd", r.delivery_id),
      reference: r.reference,
      email: r.email,
      createdAt: (r.created_at as Date).toISOString(),
      reportCursor: toId("dr", reportCursor)
    }
  }
}

/** Every read the API and the dashboard make, for one account, as paths. */
const reads = (a: Account): Array<[string, string]> => {
  const s = a.sample
  const at = new Date(s.createdAt!).getTime()
  // A whole local day, as the dashboard's date filter sends it.
  const from = new Date(Math.floor(at / DAY_MS) * DAY_MS).toISOString()
  const to = new Date(Math.floor(at / DAY_MS) * DAY_MS + DAY_MS).toISOString()
  const window = `created_gte=${encodeURIComponent(from)}&created_lt=${encodeURIComponent(to)}`
  const list = (query: string) => `/v1/deposit-requests?limit=25${query === "" ? "" : `&${query}`}`
  const q = (text: string) => list(`q=${encodeURIComponent(text)}`)
  return [
    ["list newest 25 (dashboard)", list("")],
    ["list newest 100", "/v1/deposit-requests?limit=100"],
    ["list, a page far back (cursor)", list(`starting_after=${s.id}`)],
    ...depositRequestStatuses.map((st): [string, string] => [`list status=${st}`, list(`status=${st}`)]),
    ["list created_gte/created_lt, one day far back", list(window)],
    ["list created_gte only, far back", list(`created_gte=${encodeURIComponent(from)}`)],
    ["list created_lt only, far back", list(`created_lt=${encodeURIComponent(to)}`)],
    ["list one day far back, next page", list(`${window}&starting_after=${s.id}`)],
    ["list status=settled in one day", list(`status=settled&${window}`)],
    ["list status=needs_attention in one day", list(`status=needs_attention&${window}`)],
    ["list q by reference in one day", list(`q=${encodeURIComponent(s.reference!)}&${window}`)],
    ["list reference=", list(`reference=${encodeURIComponent(s.reference!)}`)],
    ["list customer=", list(`customer=${s.customer}`)],
    ["list deposit_address=", list(`deposit_address=${s.depositAddress}`)],
    ["list payer_wallet=", list(`payer_wallet=${s.wallet}`)],
    ["list transaction_hash=", list(`transaction_hash=${s.txHash}`)],
    ["search dr_", q(s.id!)],
    ["search cus_", q(s.customer!)],
    ["search iss_", q(s.issuer!)],
    ["search pa_", q(s.payout!)],
    ["search va_", q(s.attempt!)],
    ["search att_", q(s.attachment!)],
    ["search evt_", q(s.event!)],
    ["search whd_", q(s.delivery!)],
    ["search reference", q(s.reference!)],
    ["search email", q(s.email!)],
    ["search deposit address", q(s.depositAddress!)],
    ["search payer wallet", q(s.wallet!)],
    ["search transaction hash", q(s.txHash!)],
    ["read a request", `/v1/deposit-requests/${s.id}`],
    ["a request's transfers", `/v1/deposit-requests/${s.id}/transfers`],
    ["a request's recoveries", `/v1/deposit-requests/${s.id}/recoveries`],
    ["a request's deliveries", `/v1/deposit-requests/${s.id}/deliveries`],
    ["a request's verification attempts", `/v1/deposit-requests/${s.id}/verification-attempts`],
    ["events newest 25", "/v1/events?limit=25"],
    ["events type=deposit_request.settled", "/v1/events?limit=25&type=deposit_request.settled"],
    ["events of a request", `/v1/events?limit=25&deposit_request_id=${s.id}`],
    ["events, a page far back", `/v1/events?limit=25&starting_after=${s.event}`],
    ["an endpoint's deliveries", `/v1/webhooks/${toId("wh", a.endpointId)}/deliveries?limit=25`],
    [
      "an endpoint's failed deliveries",
      `/v1/webhooks/${toId("wh", a.endpointId)}/deliveries?limit=25&outcome=failed`
    ],
    ["account summary (overview)", "/v1/account/summary?time_zone=Europe%2FParis"],
    ["reconciliation, first page (totals and differences)", "/v1/reconciliation?limit=100"],
    ["reconciliation, a page far back", `/v1/reconciliation?limit=100&starting_after=${s.reportCursor}`]
  ]
}

/** One timed GET; fails the bench on anything but 200. */
const timed = async (a: Account, path: string) => {
  const started = performance.now()
  const r = await a.api.call("GET", path)
  const ms = performance.now() - started
  if (r.status !== 200) throw new Error(`${a.label} GET ${path}: ${r.status} ${JSON.stringify(r.body)}`)
  return ms
}

/**
 * The full reconciliation report and the CSV export, per 10,000 rows: the report walked page by page (100 a page)
 * for `reportRows` rows, as the dashboard and the CLI walk it; the export streamed whole from
 * `GET /v1/deposit-requests/export.csv`, its lines counted as they arrive, with this process's RSS (the service
 * runs in it) sampled throughout.
 */
const reportAndExport = async (a: Account, reportRows: number) => {
  // Each page timed alone; the figure is the median page's cost per row. A small account's one page is walked
  // again until as many pages are timed as a read has samples.
  const perRow: Array<number> = []
  let cursor: string | null = null
  let reported = 0
  while (reported < reportRows || perRow.length < SAMPLES) {
    const started = performance.now()
    const page: { body: { requests: Array<unknown>; next_cursor: string | null } } = await a.api.call(
      "GET",
      `/v1/reconciliation?limit=100${cursor === null ? "" : `&starting_after=${cursor}`}`
    )
    perRow.push((performance.now() - started) / Math.max(1, page.body.requests.length))
    reported += page.body.requests.length
    cursor = page.body.next_cursor
  }
  const rss = sampleRss(process.pid, 250)
  const exportStarted = performance.now()
  const res = await a.raw("/v1/deposit-requests/export.csv")
  if (res.status !== 200 || res.body === null) throw new Error(`${a.label} export: ${res.status}`)
  let lines = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    for (const byte of chunk) if (byte === 10) lines++
  }
  const exportMs = performance.now() - exportStarted
  const samples = rss.stop()
  const rows = lines - 1
  return {
    reportPer10k: median(perRow) * 10_000,
    reported,
    exportPer10k: (exportMs * 10_000) / Math.max(1, rows),
    exported: rows,
    exportSeconds: exportMs / 1000,
    rss: { ...samples, atQuarters: [0.25, 0.5, 0.75, 1].map(samples.at) }
  }
}

export async function run() {
  out(`history: ${LARGE} requests beside ${SMALL}, ${SAMPLES} timed calls per read`)
  const local = await startLocalChain()
  const running = await startChainService(local, {
    mineWhileWaiting: true,
    config: { rateLimitCapacity: 10_000_000 }
  })
  const mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  try {
    const smallMerchant = await createMerchant(running.service.databaseUrl)
    const small = await makeAccount(
      "small",
      SMALL,
      2,
      local,
      running,
      smallMerchant,
      smallMerchant.accountId.slice("acct_".length),
      5
    )
    const large = await makeAccount(
      "large",
      LARGE,
      1,
      local,
      running,
      running.merchant,
      running.merchant.accountId.slice("acct_".length),
      5 + PAID
    )
    clearInterval(mining)
    // The fill's ledger writes folded into the reconciliation books once, as the first report after them would,
    // then the tables vacuumed, so the timed reads see the steady state rather than the fill's dead rows.
    for (const a of [small, large]) await timed(a, "/v1/reconciliation?limit=1")
    await running.db.query("vacuum analyze")
    const largeReads = reads(large)
    const smallReads = reads(small)
    // Warm-up: each read a few times on both, so neither pays the first plan or a cold page.
    for (const [i, [, path]] of largeReads.entries()) {
      for (let k = 0; k < 3; k++) {
        await timed(large, path)
        await timed(small, smallReads[i]![1])
      }
    }
    const times = largeReads.map(() => ({
      large: [] as Array<number>,
      small: [] as Array<number>
    }))
    for (let round = 0; round < SAMPLES; round++) {
      for (const [i, [, path]] of largeReads.entries()) {
        times[i]!.large.push(await timed(large, path))
        times[i]!.small.push(await timed(small, smallReads[i]![1]))
      }
    }
    out(`${"read".padEnd(48)} ${"large ms".padStart(9)} ${"small ms".padStart(9)} ${"ratio".padStart(7)}`)
    for (const [i, [name]] of largeReads.entries()) {
      const l = median(times[i]!.large)
      const s = median(times[i]!.small)
      out(
        `${name.padEnd(48)} ${l.toFixed(1).padStart(9)} ${s.toFixed(1).padStart(9)} ${(l / s).toFixed(2).padStart(7)}`
      )
      recordFigure({
        figure: `${name}, median at ${LARGE.toLocaleString("en-US")} requests`,
        value: l,
        unit: "ms",
        target: `≤ 2× baseline and ≤ ${TARGET_MS} ms`,
        met: l <= 2 * s && l <= TARGET_MS,
        baseline: { name: `${SMALL} requests`, value: s, unit: "ms" }
      })
    }
    const smallReport = await reportAndExport(small, SMALL)
    const largeReport = await reportAndExport(large, REPORT_ROWS)
    for (const [name, l, s] of [
      [
        `the reconciliation report walked by pages of 100 (${largeReport.reported.toLocaleString("en-US")} rows), median page per 10,000 rows`,
        largeReport.reportPer10k,
        smallReport.reportPer10k
      ],
      [
        `CSV export streamed whole (${largeReport.exported.toLocaleString("en-US")} rows), per 10,000 rows`,
        largeReport.exportPer10k,
        smallReport.exportPer10k
      ]
    ] as const) {
      out(`${name}: ${l.toFixed(1)} ms beside ${s.toFixed(1)} ms, ${(l / s).toFixed(2)}×`)
      recordFigure({
        figure: `${name}, at ${LARGE.toLocaleString("en-US")} requests`,
        value: l,
        unit: "ms",
        target: "≤ 2× baseline (per 10,000 rows)",
        met: l <= 2 * s,
        baseline: { name: `${SMALL} requests`, value: s, unit: "ms" }
      })
    }
    const mib = (b: number) => b / 1048576
    const [q1, q2, q3, q4] = largeReport.rss.atQuarters.map(mib)
    out(
      `export of ${largeReport.exported} rows in ${largeReport.exportSeconds.toFixed(0)} s; RSS (service and reader) ` +
        `at 25/50/75/100 %: ${[q1, q2, q3, q4].map((m) => m!.toFixed(0)).join(" / ")} MiB, peak ${mib(largeReport.rss.peak).toFixed(0)} MiB`
    )
    recordFigure({
      figure: `CSV export of ${largeReport.exported.toLocaleString("en-US")} rows: RSS growth from a quarter through to the end (service and reader in one process)`,
      value: q4! - q1!,
      unit: "MiB",
      target: `flat: ≤ ${RSS_FLAT_MIB} MiB`,
      met: q4! - q1! <= RSS_FLAT_MIB,
      baseline: {
        name: "RSS at a quarter of the export",
        value: q1!,
        unit: "MiB"
      }
    })
  } finally {
    clearInterval(mining)
    await running.stop()
    await local.node.stop()
  }
}
