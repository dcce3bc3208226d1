import { appendFileSync } from "node:fs"
import { request as httpsRequest } from "node:https"
import { join } from "node:path"
import { parseEther } from "viem"
import { anvilDevAccount, DEV_ACCOUNT } from "../../infra/chain/Anvil"
import { signPayload } from "../../services/webhooks/WebhookSignature"
import { check, undelivered, type Violation } from "./Checker"
import { resumeOutOfGas, runFaults, treasuryAddress } from "./Faults"
import { countBy, emptyHistory, type History } from "./History"
import { type Parts, startParts } from "./Parts"
import { type Build, currentBuild } from "./Release"
import { type Crossings, crossingsOf, type Replacement, runUpgrade } from "./Upgrade"
import {
  type Backup,
  type BeforeRestore,
  checkRestore,
  keptRequests,
  type RestoreFigures,
  restore,
  takeBackup
} from "./Restore"
import {
  type ChaosMerchant,
  type Client,
  type Db,
  makeClient,
  makeDb,
  makeMerchants,
  registerEndpoint,
  runEndpointChurn,
  runRequests,
  sleep,
  type WorkloadContext
} from "./Workload"

export type PlantKind = "double-payout" | "changed-bytes" | "ledger-gap"
export const PLANT_KINDS: ReadonlyArray<PlantKind> = ["double-payout", "changed-bytes", "ledger-gap"]

export interface ChaosOptions {
  readonly seconds: number
  readonly seed: number
  readonly instances?: number
  readonly concurrency?: number
  /** How long the system may take to settle after the last fault. */
  readonly settleWithinMs?: number
  readonly log?: (line: string) => void
  /** A rolling upgrade: every instance starts on this build and is replaced by this checkout's mid-run. */
  readonly upgradeFrom?: Build
  /**
   * The restore drill: a `pg_dump` of the service's database at 40 % of the window, the workload and faults
   * carrying on, then every instance stopped, the dump restored under the same name, the instances started again
   * on the same chain and NATS, and the run settled and checked once more.
   */
  readonly restoreDrill?: boolean
}

export interface Figures {
  readonly seed: number
  readonly seconds: number
  readonly instances: number
  readonly requests: number
  readonly requestsByMode: Record<string, number>
  readonly requestsByStatus: Record<string, number>
  readonly payments: number
  readonly calls: number
  readonly callsByStatus: Record<string, number>
  readonly faultsByKind: Record<string, number>
  readonly endpoints: number
  readonly deliveries: number
  readonly deliveries2xx: number
  readonly eventsDelivered: number
  readonly settleAfterLastFaultMs: number | undefined
  upgrade?: {
    readonly from: string
    readonly to: string
    readonly replacements: ReadonlyArray<Replacement>
    /** Client calls answered by each version, by answer. */
    readonly callsByVersion: Record<string, Record<string, number>>
    readonly crossings: Crossings
  }
  /** The restore drill's figures, filled in by its check. */
  restore?: RestoreFigures
}

export interface ChaosRun {
  readonly history: History
  readonly parts: Parts
  readonly client: Client
  readonly db: Db
  readonly merchants: ReadonlyArray<ChaosMerchant>
  readonly figures: Figures
  /** Runs the checker over the run as it now stands. */
  readonly check: () => Promise<ReadonlyArray<Violation>>
  /** Simulates a service bug of this kind in the finished run (see `plant`). */
  readonly plant: (kind: PlantKind) => Promise<string>
  readonly stop: () => Promise<void>
}

/** Until every request ended, nothing is being sent on chain, and each stable healthy endpoint has every event. */
const settle = async (ctx: WorkloadContext, withinMs: number, log: (line: string) => void) => {
  const until = Date.now() + withinMs
  let lastResume = 0
  while (Date.now() < until) {
    const ids = ctx.history.requests.map((r) => r.id.slice(3))
    const open = await ctx.db.query<{ n: string }>(
      "select count(*) as n from deposit_requests where id = any($1::uuid[]) and status not in ('settled', 'expired', 'returned')",
      [ids]
    )
    const sending = await ctx.db.query<{ n: string }>(
      "select count(*) as n from transfers where state = 'signed'"
    )
    const missing = await undelivered(ctx.history, ctx.db)
    if (Number(open.rows[0]!.n) === 0 && Number(sending.rows[0]!.n) === 0 && missing.length === 0)
      return Date.now()
    if (Date.now() - lastResume > 5_000) {
      lastResume = Date.now()
      const resumed = await resumeOutOfGas(ctx.client, ctx.merchants)
      if (resumed > 0) ctx.history.notes.push(`settling: ${resumed} request(s) resumed by the operator`)
      log(`settling: ${open.rows[0]!.n} open, ${sending.rows[0]!.n} sending, ${missing.length} undelivered`)
    }
    await sleep(1_000)
  }
  return undefined
}

export const runChaos = async (options: ChaosOptions): Promise<ChaosRun> => {
  const log = options.log ?? (() => undefined)
  const instances = options.instances ?? 3
  const history = emptyHistory(options.seed, options.seconds, instances)
  log(`chaos: seed ${options.seed}, ${options.seconds} s, ${instances} instances: starting the parts`)
  const parts = await startParts(history, instances, options.upgradeFrom ?? currentBuild())
  const client = makeClient(history, parts.fleet, options.seed)
  const db = makeDb(parts.pg.url)
  try {
    const merchants = await makeMerchants(parts, client, 2)
    const started = Date.now()
    const ctx: WorkloadContext = {
      history,
      parts,
      client,
      db,
      merchants,
      seed: options.seed,
      stopAt: started + options.seconds * 1_000,
      chainGate: { readers: 0, writer: undefined, waiting: 0 }
    }
    for (const merchant of merchants) {
      for (const kind of ["ok", "slow", "fail", "hang"] as const)
        await registerEndpoint(ctx, merchant, kind, `/m${merchant.index}/stable-${kind}`, true)
    }
    log("chaos: parts up; workload and faults running")
    const backup: Promise<Backup> | undefined = options.restoreDrill
      ? sleep(options.seconds * 400).then(() => {
          log("chaos: taking the backup")
          return takeBackup(ctx)
        })
      : undefined
    const [replacements] = await Promise.all([
      options.upgradeFrom === undefined ? [] : runUpgrade(ctx, currentBuild(), started, log),
      runRequests(ctx, options.concurrency ?? 4),
      ...merchants.map((m) => runEndpointChurn(ctx, m)),
      runFaults(ctx, started)
    ])
    // Everything back: instances, PostgreSQL, NATS, a healthy RPC and a treasury with gas.
    parts.rpc.set({ kind: "healthy" })
    await parts.chain.chain.setBalance({ address: treasuryAddress, value: parseEther("10") })
    if (history.lastFaultAt === 0) history.lastFaultAt = Date.now()
    log(
      `chaos: workload done (${history.requests.length} requests, +${((Date.now() - started) / 1000).toFixed(0)} s); settling`
    )
    let settledAt = await settle(ctx, options.settleWithinMs ?? 180_000, log)
    let drill: { backup: Backup; before: BeforeRestore; lost: ReadonlySet<string> } | undefined
    if (backup !== undefined) {
      const taken = await backup
      log(`chaos: ${settledAt === undefined ? "NOT settled" : "settled"}; restoring the backup`)
      if (settledAt === undefined) history.notes.push("the run did not settle before the restore")
      const restored = await restore(parts, history, taken, db)
      const kept = await keptRequests(db, history)
      drill = {
        backup: taken,
        before: restored.before,
        lost: new Set(history.requests.filter((r) => !kept.has(r.id)).map((r) => r.id))
      }
      log(`chaos: restored in ${restored.ms} ms (${drill.lost.size} requests lost); settling again`)
      settledAt = await settle(ctx, options.settleWithinMs ?? 180_000, log)
    }
    const figures = figuresOf(history, instances, settledAt)
    const { queryStatuses } = { queryStatuses: await statusesOf(db, history) }
    Object.assign(figures.requestsByStatus, queryStatuses)
    if (options.upgradeFrom !== undefined)
      figures.upgrade = {
        from: options.upgradeFrom.version,
        to: currentBuild().version,
        replacements,
        callsByVersion: Object.fromEntries(
          [...new Set(history.calls.map((c) => c.version))].map((version) => [
            version,
            countBy(
              history.calls.filter((c) => c.version === version),
              (c) => (c.status === undefined ? "none" : String(c.status))
            )
          ])
        ),
        crossings: await crossingsOf(
          db,
          history.requests.map((r) => r.id)
        )
      }
    return {
      history,
      parts,
      client,
      db,
      merchants,
      figures,
      check: async () => {
        if (drill === undefined)
          return [...(await check(history, parts, client, db, merchants)), ...malformedMessages(parts)]
        const restoreFigures: RestoreFigures = {
          backupAfterMs: drill.backup.at - started,
          payersHeld: drill.backup.held,
          requestsLost: 0,
          requestsKept: 0,
          payoutsAfterBackup: 0,
          returnsAfterBackup: 0,
          transfersRecognised: 0,
          creditsAfterBackup: 0,
          eventsBeforeRestore: 0,
          eventsRedeliveredUnderFirstIds: 0,
          eventsNotRaisedAgain: 0,
          restoreMs: drill.before.at - drill.backup.at
        }
        figures.restore = restoreFigures
        const usual = await check(history, parts, client, db, merchants, {
          lost: drill.lost,
          deliveriesBefore: drill.before.deliveries
        })
        const own = await checkRestore(history, parts, db, drill.backup, drill.before, restoreFigures)
        return [...usual, ...own, ...malformedMessages(parts)]
      },
      plant: (kind) => plant(kind, history, parts, db),
      stop: async () => {
        await db.end().catch(() => undefined)
        await parts.cleanup()
      }
    }
  } catch (error) {
    await db.end().catch(() => undefined)
    await parts.cleanup()
    throw error
  }
}

/**
 * A stream message that an instance could not decode is termed, so whatever it carried is lost: in a rolling upgrade
 * that is a format one version writes and the other cannot read.
 */
const malformedMessages = (parts: Parts): ReadonlyArray<Violation> =>
  parts.processes.flatMap((process) =>
    process
      .output()
      .split("\n")
      .filter((line) => line.includes("dropped a malformed message"))
      .map((line) => ({ rule: "malformed-message", detail: line.slice(0, 400) }))
  )

const statusesOf = async (db: Db, history: History) => {
  const rows = await db.query<{ status: string; n: string }>(
    "select status, count(*) as n from deposit_requests where id = any($1::uuid[]) group by status",
    [history.requests.map((r) => r.id.slice(3))]
  )
  return Object.fromEntries(rows.rows.map((r) => [r.status, Number(r.n)]))
}

const figuresOf = (history: History, instances: number, settledAt: number | undefined): Figures => {
  const ok = history.deliveries.filter((d) => d.status >= 200 && d.status < 300)
  return {
    seed: history.seed,
    seconds: history.seconds,
    instances,
    requests: history.requests.length,
    requestsByMode: countBy(history.requests, (r) => r.mode),
    requestsByStatus: {},
    payments: history.requests.reduce((n, r) => n + r.payments.length, 0),
    calls: history.calls.length,
    callsByStatus: countBy(history.calls, (c) =>
      c.status === undefined ? `none (${c.error})` : String(c.status)
    ),
    faultsByKind: countBy(history.faults, (f) => f.kind),
    endpoints: history.endpoints.length,
    deliveries: history.deliveries.length,
    deliveries2xx: ok.length,
    eventsDelivered: new Set(ok.map((d) => d.eventId)).size,
    settleAfterLastFaultMs: settledAt === undefined ? undefined : Math.max(0, settledAt - history.lastFaultAt)
  }
}

/**
 * A planted fault: what a buggy service would have done, done by the runner, without a switch in the service.
 * - `double-payout`: a second payout-sized transfer to a settled request's payout address, from the treasury key;
 * - `changed-bytes`: one delivery replayed to its receiver with other bytes, the same event id, signed with the
 *   endpoint's secret;
 * - `ledger-gap`: one recovery taken out of its request's ledger in PostgreSQL.
 */
const plant = async (kind: PlantKind, history: History, parts: Parts, db: Db): Promise<string> => {
  switch (kind) {
    case "double-payout": {
      const settled = await db.query<{ id: string }>(
        "select 'dr_' || id as id from deposit_requests where status = 'settled' and id = any($1::uuid[]) limit 1",
        [history.requests.map((r) => r.id.slice(3))]
      )
      const request = history.requests.find((r) => r.id === settled.rows[0]?.id)
      if (request === undefined) throw new Error("no settled request to pay twice")
      const treasury = anvilDevAccount(DEV_ACCOUNT.treasury)
      await parts.chain.chain.waitForTransactionReceipt({
        hash: await parts.chain.mint(treasury.address, request.amount)
      })
      await parts.chain.pay(treasury, request.payout, request.amount)
      return request.id
    }
    case "changed-bytes": {
      const delivery = history.deliveries.find((d) => d.status === 200 && d.path.includes("stable-ok"))
      const endpoint = history.endpoints.find((e) => e.path === delivery?.path)
      if (delivery === undefined || endpoint === undefined) throw new Error("no delivery to replay")
      const body = Buffer.from(`${delivery.body.toString("utf8")} `)
      const signature = signPayload(endpoint.secret, Math.floor(Date.now() / 1000), body)
      await new Promise<void>((resolve, reject) => {
        const req = httpsRequest(
          endpoint.url,
          {
            method: "POST",
            ca: parts.ca,
            headers: {
              "content-type": "application/json",
              "service-event-id": delivery.eventId,
              "service-signature": signature
            }
          },
          (res) => {
            res.resume()
            res.on("end", () => resolve())
          }
        )
        req.on("error", reject)
        req.end(body)
      })
      return delivery.eventId
    }
    case "ledger-gap": {
      const withRecovery = await db.query<{ id: string }>(
        `select 'dr_' || id as id from deposit_requests
         where id = any($1::uuid[]) and jsonb_array_length(snapshot #> '{context,recoveries}') > 0 limit 1`,
        [history.requests.map((r) => r.id.slice(3))]
      )
      const id = withRecovery.rows[0]?.id
      if (id === undefined) throw new Error("no request with a recovery")
      await db.query(
        "update deposit_requests set snapshot = jsonb_set(snapshot, '{context,recoveries}', (snapshot #> '{context,recoveries}') - 0) where id = $1",
        [id.slice(3)]
      )
      return id
    }
  }
}

/** The run's summary as printed and as appended to RESULTS.md. */
export const summaryOf = (
  figures: Figures,
  violations: ReadonlyArray<Violation>,
  notes: ReadonlyArray<string>,
  plantNote?: string
) => {
  const lines = [
    `## seed ${figures.seed}, ${figures.seconds} s, ${figures.instances} instances (${new Date().toISOString()})`,
    "",
    ...(plantNote === undefined ? [] : [`- planted: ${plantNote}`]),
    `- requests: ${figures.requests} by mode ${JSON.stringify(figures.requestsByMode)}, final ${JSON.stringify(figures.requestsByStatus)}`,
    `- payer transfers: ${figures.payments}`,
    `- client calls: ${figures.calls} by answer ${JSON.stringify(figures.callsByStatus)}`,
    `- faults: ${JSON.stringify(figures.faultsByKind)}`,
    `- webhook endpoints: ${figures.endpoints}; deliveries received: ${figures.deliveries} (${figures.deliveries2xx} answered 2xx, ${figures.eventsDelivered} distinct events)`,
    ...(figures.upgrade === undefined
      ? []
      : [
          `- upgrade ${figures.upgrade.from} → ${figures.upgrade.to}: ${figures.upgrade.replacements.map((r) => `instance ${r.instance} at +${((r.at - (figures.upgrade?.replacements[0]?.at ?? r.at)) / 1000).toFixed(0)} s (out ${(r.outMs / 1000).toFixed(1)} s)`).join(", ")}`,
          `- client calls by version and answer ${JSON.stringify(figures.upgrade.callsByVersion)}`,
          `- steps by version ${JSON.stringify(figures.upgrade.crossings.stepsByVersion)}, by instance ${JSON.stringify(figures.upgrade.crossings.stepsByInstance)}`,
          `- requests stepped by both versions: ${figures.upgrade.crossings.requestsAcrossVersions}; snapshots read across versions ${JSON.stringify(figures.upgrade.crossings.snapshotReads)}`
        ]),
    ...(figures.restore === undefined ? [] : restoreLines(figures.restore)),
    `- settled ${figures.settleAfterLastFaultMs === undefined ? "NOT within the bound" : `${(figures.settleAfterLastFaultMs / 1000).toFixed(1)} s`} after the last fault`,
    `- violations: ${violations.length}`,
    // One line each: a detail may quote an error over several lines.
    ...violations.slice(0, 50).map((v) => `  - [${v.rule}] ${v.detail.replace(/\s+/g, " ").slice(0, 400)}`),
    ...(violations.length > 50 ? [`  - … and ${violations.length - 50} more`] : []),
    ...(notes.length === 0 ? [] : [`- notes: ${notes.slice(0, 10).join("; ")}`]),
    ""
  ]
  return lines.join("\n")
}

const restoreLines = (r: RestoreFigures) => [
  `- restore drill: pg_dump ${(r.backupAfterMs / 1000).toFixed(1)} s into the run (${r.payersHeld} payer transfers held until after it), restored ${(r.restoreMs / 1000).toFixed(1)} s after it; requests kept ${r.requestsKept}, made after the backup and lost with it ${r.requestsLost}`,
  `- after the backup, from the Transfer logs: ${r.payoutsAfterBackup} payouts and ${r.returnsAfterBackup} returns (${r.transfersRecognised} of the kept requests' recognised as confirmed transfers by the restored service); payer transfers found again as credits: ${r.creditsAfterBackup}`,
  `- events of kept requests before the restore: ${r.eventsBeforeRestore} (${r.eventsNotRaisedAgain} not raised again); delivered again after it under their first ids: ${r.eventsRedeliveredUnderFirstIds}`
]

export const appendResults = (summary: string) =>
  appendFileSync(join(import.meta.dirname, "RESULTS.md"), `\n${summary}`)
