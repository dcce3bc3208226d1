import type { Db } from "./Workload"
import { sleep, type WorkloadContext } from "./Workload"
import type { Build } from "./Release"

/** One instance replaced by the new build: when, and how long it was out. */
export interface Replacement {
  readonly instance: number
  readonly at: number
  readonly outMs: number
}

/**
 * A rolling upgrade as an orchestrator does one: mid-run, each instance in turn is stopped (SIGTERM, as a deploy
 * does) and started again on the new build, while the others serve. The first new instance applies the new
 * migrations; the old ones go on serving on that schema until their turn. Replacements are spread over the first half
 * of the run (from 15 % to 50 % of it), one at a time, never leaving fewer than one instance up; the workload goes on
 * for at least a third of the run after the last one, however long starts took, so the new version works alone too.
 */
export const runUpgrade = async (
  ctx: WorkloadContext,
  target: Build,
  started: number,
  log: (line: string) => void
): Promise<ReadonlyArray<Replacement>> => {
  const { fleet } = ctx.parts
  const span = ctx.stopAt - started
  const done: Array<Replacement> = []
  for (const [turn, instance] of fleet.entries()) {
    await sleep(
      Math.max(0, started + span * (0.2 + (0.6 * turn) / Math.max(1, fleet.length - 1)) - Date.now())
    )
    // Its turn comes when it is up (a fault may be restarting it) and another one serves meanwhile.
    while (instance.down || fleet.filter((i) => !i.down).length < 2) await sleep(200)
    const at = Date.now()
    instance.down = true
    const downtime = ctx.history.downtime[instance.index]!
    downtime.push({ from: at, to: Number.POSITIVE_INFINITY })
    await instance.process?.stop("SIGTERM")
    instance.build = target
    await ctx.parts.startInstance(instance)
    downtime[downtime.length - 1]!.to = Date.now()
    instance.down = false
    done.push({ instance: instance.index, at, outMs: Date.now() - at })
    ctx.history.notes.push(
      `instance ${instance.index} upgraded to ${target.version} in ${Date.now() - at} ms`
    )
    log(`chaos: instance ${instance.index} now runs ${target.version}`)
  }
  ctx.stopAt = Math.max(ctx.stopAt, Date.now() + span / 3)
  return done
}

/** Who applied the run's steps, by version, and how often a step read a snapshot the other version had written. */
export interface Crossings {
  /** Steps applied by each version. */
  readonly stepsByVersion: Record<string, number>
  /** Steps applied by each instance (`i<index>@<version>`). */
  readonly stepsByInstance: Record<string, number>
  /** Requests stepped by both versions. */
  readonly requestsAcrossVersions: number
  /** Steps whose previous step (the snapshot they read) was written by the other version, by "from→to". */
  readonly snapshotReads: Record<string, number>
}

const versionOf = (instance: string) => instance.slice(instance.indexOf("@") + 1)

export const crossingsOf = async (db: Db, requestIds: ReadonlyArray<string>): Promise<Crossings> => {
  const rows = await db.query<{ instance: string; previous: string | null; request: string }>(
    `select instance, lag(instance) over (partition by deposit_request_id order by version) as previous,
            deposit_request_id::text as request
       from deposit_request_steps where deposit_request_id = any($1::uuid[])`,
    [requestIds.map((id) => id.slice(3))]
  )
  const stepsByVersion: Record<string, number> = {}
  const stepsByInstance: Record<string, number> = {}
  const snapshotReads: Record<string, number> = {}
  const versionsOf = new Map<string, Set<string>>()
  for (const row of rows.rows) {
    const version = versionOf(row.instance)
    stepsByVersion[version] = (stepsByVersion[version] ?? 0) + 1
    stepsByInstance[row.instance] = (stepsByInstance[row.instance] ?? 0) + 1
    versionsOf.set(row.request, (versionsOf.get(row.request) ?? new Set()).add(version))
    if (row.previous !== null && versionOf(row.previous) !== version) {
      const key = `${versionOf(row.previous)}→${version}`
      snapshotReads[key] = (snapshotReads[key] ?? 0) + 1
    }
  }
  return {
    stepsByVersion,
    stepsByInstance,
    requestsAcrossVersions: [...versionsOf.values()].filter((versions) => versions.size > 1).length,
    snapshotReads
  }
}
