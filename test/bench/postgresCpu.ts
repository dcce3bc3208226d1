import { readdirSync, readFileSync } from "node:fs"

/** Clock ticks per second of `/proc/<pid>/stat` times (Linux's USER_HZ, 100 on every architecture we run). */
const TICKS_PER_SECOND = 100

/**
 * CPU time, in milliseconds, of the PostgreSQL server on this machine so far: every `postgres` process's own time,
 * plus what the ones it reaped used (a backend that exits between two readings still counts, through the
 * postmaster). `undefined` where `/proc` cannot tell (another OS, or the server on another host).
 *
 * With the process's own `process.cpuUsage()` beside it, a benchmark can say where its CPU went: on a two-core
 * machine, work that costs C ms of CPU in total cannot finish in less than C / 2 ms, however it is spread.
 */
export const postgresCpuMs = (): number | undefined => {
  let ticks = 0
  let found = false
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return undefined
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      continue // gone since the listing
    }
    // The command name is in parentheses and may hold spaces; the fields after it are space-separated.
    const close = stat.lastIndexOf(")")
    if (!stat.slice(stat.indexOf("(") + 1, close).startsWith("postgres")) continue
    const fields = stat.slice(close + 2).split(" ")
    // utime, stime, cutime, cstime: fields 14–17 of proc(5), 11–14 counted from the state field.
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
    found = true
  }
  return found ? (ticks * 1000) / TICKS_PER_SECOND : undefined
}

/** PostgreSQL's CPU in milliseconds since `from` (a `postgresCpuMs` reading); `NaN` where either cannot be read. */
export const postgresCpuSince = (from: number | undefined): number => {
  const to = postgresCpuMs()
  return from === undefined || to === undefined ? Number.NaN : to - from
}
