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
 * migrations; the old ones go on serving on that schema until their turn. The first replacement comes at 15 % of the
 * run, each next one a third of the run after the previous one is up (both versions serve side by side meanwhile),
 * never leaving fewer than one instance up; the workload goes on until a third of the run after the last one, however
 * long starts took, so the new version also works alone.
 */
export const runUpgrade = async (
  ctx: WorkloadContext,
  target: Build,
  started: number,
  log: (line: string) => void
): Promise<ReadonlyArray<Replacement>> => {
  const { fleet } = ctx.parts
  const span = ctx.stopAt - started
  const since = () => `+${((Date.now() - started) / 1000).toFixed(0)} s`
  const done: Array<Replacement> = []
  let next = started + span * 0.15
  for (const instance of fleet) {
    await sleep(Math.max(0, next - Date.now()))
    // The faults have planned their run by now: the workload waits for the upgrade to end.
    ctx.stopAt = Number.POSITIVE_INFINITY
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
    log(`chaos: instance ${instance.index} now runs ${target.version} (${since()})`)
    next = Date.now() + span / 3
  }
  ctx.stopAt = Math.max(started + span, Date.now() + span / 3)
  log(
    `chaos: every instance upgraded (${since()}); the workload goes on for ${((ctx.stopAt - Date.now()) / 1000).toFixed(0)} s`
  )
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
