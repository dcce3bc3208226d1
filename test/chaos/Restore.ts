import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { getAddress, parseAbiItem } from "viem"
import type { Violation } from "./Checker"
import type { History } from "./History"
import type { Parts } from "./Parts"
import { type Db, sleep, type WorkloadContext } from "./Workload"

const run = promisify(execFile)
const BIN = "/usr/lib/postgresql/15/bin"

/** What the drill knows of its backup: when it was taken, the chain's head then, and the dump's file. */
export interface Backup {
  readonly at: number
  readonly block: bigint
  readonly file: string
  readonly dir: string
  /** Payer transfers held back until after the dump. */
  readonly held: number
}

/** What the database held just before the restore: each lifecycle event, by request and dedupe key. */
export interface BeforeRestore {
  readonly at: number
  readonly events: ReadonlyArray<{ id: string; request: string; type: string; dedupe: string }>
  /** How many deliveries the receivers had recorded when the instances were stopped. */
  readonly deliveries: number
}

export interface RestoreFigures {
  backupAfterMs: number
  payersHeld: number
  requestsLost: number
  requestsKept: number
  payoutsAfterBackup: number
  returnsAfterBackup: number
  transfersRecognised: number
  creditsAfterBackup: number
  eventsBeforeRestore: number
  eventsRedeliveredUnderFirstIds: number
  eventsNotRaisedAgain: number
  restoreMs: number
}

const args = (parts: Parts, db: string) => [
  "-h",
  "127.0.0.1",
  "-p",
  String(parts.pg.port),
  "-U",
  "postgres",
  "-d",
  db
]

/**
 * A logical backup of the service's database as an operator takes one (`pg_dump`, custom format), retried while
 * PostgreSQL is down for a fault; the chain's head is read just before, so "after the backup" has a block.
 */
export const takeBackup = async (ctx: WorkloadContext): Promise<Backup> => {
  const { parts, history, chainGate } = ctx
  const dir = mkdtempSync(join(tmpdir(), "chaos-backup-"))
  const file = join(dir, "deposits.dump")
  const until = Date.now() + 120_000
  // Payer transfers wait before and during the dump, so requests attested before it are paid after it: credits
  // the restored service must find again, and settlements and returns it must recognise.
  while (chainGate.writer !== undefined) await chainGate.writer
  let release: () => void = () => undefined
  chainGate.writer = new Promise<void>((resolve) => {
    release = resolve
  })
  try {
    while (chainGate.readers > 0) await sleep(50)
    const holdUntil = Date.now() + HOLD_PAYMENTS_MS
    while (chainGate.waiting < PAYERS_WAITING && Date.now() < holdUntil) await sleep(100)
    const held = chainGate.waiting
    for (;;) {
      const block = await parts.chain.chain.getBlockNumber()
      const at = Date.now()
      try {
        await run(join(BIN, "pg_dump"), [...args(parts, "postgres"), "-Fc", "-f", file])
        history.notes.push(`backup taken at block ${block}`)
        return { at, block, file, dir, held }
      } catch (error) {
        if (Date.now() > until) throw error
        await sleep(1_000)
      }
    }
  } finally {
    chainGate.writer = undefined
    release()
  }
}

/** Payer transfers held back until after the dump (or as many as came within HOLD_PAYMENTS_MS). */
const PAYERS_WAITING = 3
const HOLD_PAYMENTS_MS = 30_000

/** The lifecycle events as they stand, for the checker to compare with what the restored service raises. */
export const eventsNow = async (db: Db) =>
  (
    await db.query<{ id: string; request: string; type: string; dedupe: string }>(
      "select id, deposit_request_id::text as request, type, dedupe from lifecycle_events where deposit_request_id is not null"
    )
  ).rows

/**
 * The workload makes a deadline pass by moving it to the present (a deadline is at least five minutes away). That
 * stands in for time passing, which a backup does not undo: a pull made after the backup is made again in the
 * restored database, so a request whose deadline had passed is not open again there (its late payment, returned
 * on chain, would otherwise fund it and be commanded as a settlement).
 */
const deadlinesStillPassed = async (db: Db, history: History) => {
  const pulled = history.requests.filter((r) => r.expiredAt !== undefined)
  if (pulled.length === 0) return
  await db.query(
    `update deposit_requests d set expires_at = least(d.expires_at, p.at)
     from unnest($1::uuid[], $2::timestamptz[]) as p(id, at) where d.id = p.id`,
    [pulled.map((r) => r.id.slice(3)), pulled.map((r) => new Date(r.expiredAt!))]
  )
}

/**
 * Every instance stopped, the database dropped and restored from the backup under the same name, the instances
 * started again on the same chain and NATS. Answers how long the service was away.
 */
export const restore = async (
  parts: Parts,
  history: History,
  backup: Backup,
  db: Db
): Promise<{ before: BeforeRestore; ms: number }> => {
  const started = Date.now()
  for (const instance of parts.fleet) {
    instance.down = true
    history.downtime[instance.index]!.push({ from: Date.now(), to: Number.POSITIVE_INFINITY })
  }
  await Promise.all(
    parts.fleet.map((i) => i.process?.stop("SIGTERM").catch(() => i.process?.stop("SIGKILL")))
  )
  // A slow receiver records a delivery after it answers: those under way when the instances stopped come first.
  await sleep(2_500)
  const before: BeforeRestore = {
    at: Date.now(),
    events: await eventsNow(db),
    deliveries: history.deliveries.length
  }
  await run(join(BIN, "psql"), [
    ...args(parts, "template1"),
    "-v",
    "ON_ERROR_STOP=1",
    "-c",
    "drop database postgres with (force)",
    "-c",
    "create database postgres"
  ])
  await run(join(BIN, "pg_restore"), [...args(parts, "postgres"), "--exit-on-error", backup.file])
  rmSync(backup.dir, { recursive: true, force: true })
  await deadlinesStillPassed(db, history)
  await parts.startInstance(parts.fleet[0]!)
  await Promise.all(parts.fleet.slice(1).map(parts.startInstance))
  for (const instance of parts.fleet) {
    const spans = history.downtime[instance.index]!
    spans[spans.length - 1]!.to = Date.now()
    instance.down = false
  }
  history.notes.push(`restored in ${Date.now() - started} ms`)
  return { before, ms: Date.now() - started }
}

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

/** Which of the run's requests the restored database still has (the others were made after the backup). */
export const keptRequests = async (db: Db, history: History) =>
  new Set(
    (
      await db.query<{ id: string }>(
        "select 'dr_' || id as id from deposit_requests where id = any($1::uuid[])",
        [history.requests.map((r) => r.id.slice(3))]
      )
    ).rows.map((r) => r.id)
  )

/**
 * The drill's own checks, beside the usual checker's: every payout and return the chain made after the backup is a
 * confirmed transfer of the restored database under the same transaction (recognised, not sent again; none twice is
 * the usual checker's `payout-count` and `returns-total`), every payer transfer of a kept request is a credit again,
 * every event raised again keeps the id it had before the restore, and an event delivered across the restore names
 * the same request and type.
 */
export const checkRestore = async (
  history: History,
  parts: Parts,
  db: Db,
  backup: Backup,
  before: BeforeRestore,
  figures: RestoreFigures
): Promise<ReadonlyArray<Violation>> => {
  const violations: Array<Violation> = []
  const fail = (rule: string, detail: string) => violations.push({ rule, detail })
  const kept = await keptRequests(db, history)
  figures.requestsKept = kept.size
  figures.requestsLost = history.requests.length - kept.size

  const logs = await parts.chain.chain.getLogs({
    address: parts.chain.token,
    event: transferEvent,
    fromBlock: backup.block + 1n,
    toBlock: "latest"
  })
  const confirmed = new Map(
    (
      await db.query<{ tx_hash: string; command_id: string; state: string }>(
        "select lower(tx_hash) as tx_hash, command_id, state from transfers"
      )
    ).rows.map((r) => [r.tx_hash, r])
  )
  for (const request of history.requests) {
    if (request.address === undefined) continue
    const address = getAddress(request.address)
    const out = logs.filter((l) => getAddress(l.args.from!) === address)
    for (const log of out) {
      const payout = getAddress(log.args.to!) === getAddress(request.payout)
      if (payout) figures.payoutsAfterBackup++
      else figures.returnsAfterBackup++
      if (!kept.has(request.id)) continue
      const row = confirmed.get(log.transactionHash.toLowerCase())
      if (row?.state !== "confirmed")
        fail(
          "restore-unrecognised",
          `${request.id}: the ${payout ? "payout" : "return"} ${log.transactionHash} after the backup is ${row === undefined ? "not a transfer" : `a transfer ${row.state}`} in the restored database`
        )
      else figures.transfersRecognised++
    }
  }

  // Credits: every payer transfer of a kept request found again by the watcher from the restored cursor.
  const credits = new Set(
    (await db.query<{ tx_hash: string }>("select lower(tx_hash) as tx_hash from chain_credits")).rows.map(
      (r) => r.tx_hash
    )
  )
  for (const request of history.requests) {
    if (!kept.has(request.id)) continue
    for (const payment of request.payments) {
      if (payment.at > backup.at) figures.creditsAfterBackup++
      if (!credits.has(payment.hash.toLowerCase()))
        fail(
          "restore-credit-lost",
          `${request.id}: the payer's transfer ${payment.hash} is no credit after the restore`
        )
    }
  }

  // Events raised again keep their ids; a delivered event that the restored service did not raise again is named
  // in the figures (its request took another path), not lost silently.
  const after = await eventsNow(db)
  const afterByKey = new Map(after.map((e) => [`${e.request}:${e.dedupe}`, e.id]))
  const afterIds = new Set(after.map((e) => `evt_${e.id}`))
  const keptUuids = new Set([...kept].map((id) => id.slice(3)))
  for (const e of before.events) {
    if (!keptUuids.has(e.request)) continue
    figures.eventsBeforeRestore++
    const again = afterByKey.get(`${e.request}:${e.dedupe}`)
    if (again === undefined) figures.eventsNotRaisedAgain++
    else if (again !== e.id)
      fail(
        "restore-event-renamed",
        `dr_${e.request}: ${e.type} was evt_${e.id}, raised again as evt_${again}`
      )
  }
  const deliveredBefore = new Map<string, Buffer>()
  for (const d of history.deliveries.slice(0, before.deliveries))
    if (!deliveredBefore.has(d.eventId)) deliveredBefore.set(d.eventId, d.body)
  const counted = new Set<string>()
  for (const d of history.deliveries.slice(before.deliveries)) {
    const first = deliveredBefore.get(d.eventId)
    if (first === undefined) continue
    if (!counted.has(d.eventId) && afterIds.has(d.eventId)) {
      counted.add(d.eventId)
      figures.eventsRedeliveredUnderFirstIds++
    }
    const was = JSON.parse(first.toString("utf8"))
    const now = JSON.parse(d.body.toString("utf8"))
    if (was.type !== now.type || was.data?.deposit_request?.id !== now.data?.deposit_request?.id)
      fail(
        "restore-event-changed",
        `event ${d.eventId} was ${was.type} of ${was.data?.deposit_request?.id} and came again as ${now.type} of ${now.data?.deposit_request?.id}`
      )
  }
  return violations
}
