import { getAddress, parseAbiItem } from "viem"
import { type History, isExcused } from "./History"
import type { Parts } from "./Parts"
import { type ChaosMerchant, type Client, type Db, isTerminal } from "./Workload"

export interface Violation {
  readonly rule: string
  readonly detail: string
}

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

interface ChainTransfer {
  readonly from: `0x${string}`
  readonly to: `0x${string}`
  readonly value: bigint
  readonly hash: `0x${string}`
}

/** Every Transfer of the token on the chain as it stands, read from the node itself (not through our tables). */
const tokenTransfers = async (parts: Parts): Promise<ReadonlyArray<ChainTransfer>> => {
  const logs = await parts.chain.chain.getLogs({
    address: parts.chain.token,
    event: transferEvent,
    fromBlock: 0n,
    toBlock: "latest"
  })
  return logs.map((log) => ({
    from: getAddress(log.args.from!),
    to: getAddress(log.args.to!),
    value: log.args.value!,
    hash: log.transactionHash
  }))
}

const sum = (values: ReadonlyArray<bigint>) => values.reduce((a, b) => a + b, 0n)

/** The at-most-once lifecycle events, and which of them the final status implies. */
const ONCE = ["deposited", "settled", "expired", "returned", "needs_attention"] as const

/**
 * The checker over a settled run: the chain (Transfer logs), the service's reconciliation, recoveries and lifecycle
 * events, what the receivers got, and every client answer. Each violation names its rule.
 */
export const check = async (
  history: History,
  parts: Parts,
  client: Client,
  db: Db,
  merchants: ReadonlyArray<ChaosMerchant>,
  restored?: {
    /** Requests made after the backup: the restored database never had them; only the chain is checked. */
    readonly lost: ReadonlySet<string>
    /** Deliveries recorded before the restore: bytes are compared within each side of it. */
    readonly deliveriesBefore: number
  }
): Promise<ReadonlyArray<Violation>> => {
  const violations: Array<Violation> = []
  const fail = (rule: string, detail: string) => violations.push({ rule, detail })

  // A graceful stop that outlives the grace period is the service's fault; the rest is what the workload saw.
  for (const anomaly of history.anomalies)
    fail(anomaly.includes("did not stop within") ? "shutdown-grace" : "workload", anomaly)

  // Client answers: only 503 among the 5xx, and every call answered unless its instance was being stopped.
  for (const call of history.calls) {
    if (call.status !== undefined && call.status >= 500 && call.status !== 503)
      fail(
        "http-5xx",
        `${call.op} ${call.method} ${call.path} on instance ${call.instance} answered ${call.status} after ${call.ms} ms at ${new Date(call.startedAt).toISOString()}: ${call.body}`
      )
    if (call.status === undefined && !isExcused(history, call))
      fail(
        "unanswered",
        `${call.op} ${call.method} ${call.path} on instance ${call.instance}: ${call.error} after ${call.ms} ms (instance up)`
      )
  }

  const transfers = await tokenTransfers(parts)
  const merchantOf = (index: number) => merchants[index]!
  for (const request of history.requests) {
    if (restored?.lost.has(request.id)) {
      const payouts = transfers.filter((t) => t.to === getAddress(request.payout))
      if (payouts.length > 1)
        fail(
          "payout-count",
          `${request.id} (lost by the restore): ${payouts.length} transfers to its payout address`
        )
      continue
    }
    const merchant = merchantOf(request.merchant)
    const read = await client.persist(() =>
      client.call("check", { merchant }, "GET", `/v1/deposit-requests/${request.id}`)
    )
    if (read?.status !== 200) {
      fail("check", `${request.id}: not readable (${read?.status})`)
      continue
    }
    const status = read.body.status as string
    if (!isTerminal(status))
      fail("stuck", `${request.id} (${request.mode}) is ${status} after the run settled`)

    // What the chain says, from the logs alone.
    const payout = getAddress(request.payout)
    const intoPayout = transfers.filter((t) => t.to === payout)
    const address = request.address === undefined ? undefined : getAddress(request.address)
    const paidIn =
      address === undefined ? 0n : sum(transfers.filter((t) => t.to === address).map((t) => t.value))
    const out = address === undefined ? [] : transfers.filter((t) => t.from === address)
    const returns = out.filter((t) => t.to !== payout)
    const settledOnChain = intoPayout.length > 0
    if (intoPayout.length > 1)
      fail(
        "payout-count",
        `${request.id}: ${intoPayout.length} transfers to its payout address ${payout} (${intoPayout.map((t) => t.hash).join(", ")})`
      )
    for (const t of intoPayout) {
      if (t.value !== request.amount)
        fail("payout-amount", `${request.id}: payout ${t.hash} of ${t.value}, requested ${request.amount}`)
      if (t.from !== address)
        fail("payout-source", `${request.id}: payout ${t.hash} came from ${t.from}, not the deposit address`)
    }
    if (status === "settled" && !settledOnChain)
      fail("payout-missing", `${request.id} is settled and nothing reached ${payout}`)
    if (status !== "settled" && settledOnChain)
      fail("payout-unexpected", `${request.id} is ${status} and was paid out`)
    const expectedReturned = paidIn - (settledOnChain ? request.amount : 0n)
    const returned = sum(returns.map((t) => t.value))
    if (returned !== expectedReturned)
      fail(
        "returns-total",
        `${request.id} (${request.mode}): ${paidIn} paid in, ${returned} returned, ${expectedReturned} expected back`
      )
    for (const t of returns) {
      if (request.wallet === undefined || t.to !== getAddress(request.wallet))
        fail("return-destination", `${request.id}: return ${t.hash} went to ${t.to}, not the attested wallet`)
    }
    const hashes = returns.map((t) => t.hash)
    if (new Set(hashes).size !== hashes.length)
      fail("return-twice", `${request.id}: one transaction returned twice`)

    // Terminal state against what was paid and when.
    const expected: Record<typeof request.mode, ReadonlyArray<string>> = {
      exact: ["settled"],
      partial: ["settled"],
      over: ["settled"],
      stranger: ["settled"],
      late: ["expired", "returned"],
      never: ["expired"]
    }
    if (request.done && request.address !== undefined && !expected[request.mode].includes(status))
      fail(
        "terminal-state",
        `${request.id} (${request.mode}) ended ${status}, expected ${expected[request.mode].join(" or ")}`
      )

    // The recovery ledger: one entry per amount returned, matched to its transaction.
    const recoveries = await client.persist(() =>
      client.call("check", { merchant }, "GET", `/v1/deposit-requests/${request.id}/recoveries`)
    )
    const ledger = (
      (recoveries?.body?.recoveries ?? []) as Array<{ transaction_hash: string; amount_base_units: string }>
    ).map((r) => ({ hash: r.transaction_hash.toLowerCase(), amount: BigInt(r.amount_base_units) }))
    for (const t of returns) {
      const entries = ledger.filter((r) => r.hash === t.hash.toLowerCase())
      if (sum(entries.map((e) => e.amount)) !== t.value)
        fail(
          "ledger-gap",
          `${request.id}: return ${t.hash} of ${t.value} has ${entries.length} ledger entr${entries.length === 1 ? "y" : "ies"} for it`
        )
    }
    for (const entry of ledger) {
      if (!returns.some((t) => t.hash.toLowerCase() === entry.hash))
        fail("ledger-phantom", `${request.id}: ledger entry for ${entry.hash} matches no return on chain`)
    }

    // Lifecycle events: at most once, and present exactly when their state change is.
    const events = await db.query<{ type: string; n: string }>(
      "select type, count(*) as n from lifecycle_events where deposit_request_id = $1 group by type",
      [request.id.slice(3)]
    )
    const count = (type: string) =>
      Number(events.rows.find((r) => r.type === `deposit_request.${type}`)?.n ?? 0)
    for (const type of ONCE)
      if (count(type) > 1) fail("event-twice", `${request.id}: ${count(type)} ${type} events`)
    const wants: Record<string, ReadonlyArray<string>> = {
      settled: ["deposited", "settled"],
      expired: ["expired"],
      returned: ["expired", "returned"]
    }
    for (const type of wants[status] ?? [])
      if (count(type) !== 1)
        fail("event-missing", `${request.id} is ${status} with ${count(type)} ${type} events`)
    if (status === "settled" && count("expired") > 0)
      fail("event-extra", `${request.id} is settled with an expired event`)
    if (count("recovered_funds") !== ledger.length)
      fail(
        "event-recoveries",
        `${request.id}: ${count("recovered_funds")} recovered_funds events, ${ledger.length} ledger entries`
      )
  }

  // The service's own reconciliation, every account at zero: the totals and differences first, then every page,
  // each request compared with the chain.
  for (const merchant of merchants) {
    let cursor: string | null = null
    do {
      const path: string = `/v1/reconciliation?limit=100${cursor === null ? "" : `&starting_after=${cursor}`}`
      const report = await client.persist(() => client.call("check", { merchant }, "GET", path))
      if (report?.status !== 200) {
        fail("reconciliation", `account ${merchant.accountId}: report answered ${report?.status}`)
        break
      }
      const body = report.body as {
        totals: { requests_with_differences: number }
        differences: Array<{ deposit_request_id: string; differences: Array<unknown> }>
        requests: Array<{ deposit_request_id: string; differences: Array<unknown> }>
        next_cursor: string | null
      }
      if (cursor === null && body.totals.requests_with_differences !== 0)
        fail(
          "reconciliation",
          `account ${merchant.accountId}: ${body.totals.requests_with_differences} differ`
        )
      for (const r of cursor === null ? [...body.differences, ...body.requests] : body.requests) {
        if (r.differences.length > 0)
          fail("reconciliation", `${r.deposit_request_id}: ${JSON.stringify(r.differences)}`)
      }
      cursor = body.next_cursor
    } while (cursor !== null)
  }

  // Deliveries: every attempt of one event carries the same bytes, the event's own.
  // After a restore an event raised again keeps its id but not its bytes (its instants are the new step's): each
  // side of the restore is compared on its own, and the stored body with what came after it.
  const boundary = restored?.deliveriesBefore ?? 0
  const bodies = new Map<string, Buffer>()
  for (const [i, d] of history.deliveries.entries()) {
    if (i === boundary && boundary > 0) bodies.clear()
    const first = bodies.get(d.eventId)
    if (first === undefined) bodies.set(d.eventId, d.body)
    else if (!first.equals(d.body))
      fail("changed-bytes", `event ${d.eventId} was delivered to ${d.path} with other bytes`)
  }
  const stored = await db.query<{ id: string; body: string }>("select id, body from lifecycle_events")
  const storedBody = new Map(stored.rows.map((r) => [`evt_${r.id}`, r.body]))
  for (const [eventId, body] of bodies) {
    const original = storedBody.get(eventId)
    if (original !== undefined && original !== body.toString("utf8"))
      fail("changed-bytes", `event ${eventId} was delivered with bytes other than the event's`)
  }
  // Every event of an account reached each of its stable healthy endpoints with a 2xx.
  for (const missing of await undelivered(history, db)) fail("undelivered", missing)
  return violations
}

/** Events of an account that a stable healthy endpoint of that account has not had answered 2xx. */
export const undelivered = async (history: History, db: Db): Promise<ReadonlyArray<string>> => {
  const out: Array<string> = []
  for (const endpoint of history.endpoints) {
    if (!endpoint.stable || (endpoint.receiver !== "ok" && endpoint.receiver !== "slow")) continue
    const events = await db.query<{ id: string }>(
      `select l.id from lifecycle_events l join webhook_endpoints e on e.account_id = l.account_id
       where e.id = $1 and l.type <> 'webhook.test' and l.occurred_at >= e.created_at`,
      [endpoint.id.slice(3)]
    )
    const got = new Set(
      history.deliveries
        .filter((d) => d.path === endpoint.path && d.status >= 200 && d.status < 300)
        .map((d) => d.eventId)
    )
    for (const { id } of events.rows)
      if (!got.has(`evt_${id}`))
        out.push(`event evt_${id} never reached ${endpoint.id} (${endpoint.receiver}) with a 2xx`)
  }
  return out
}
