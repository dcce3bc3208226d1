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

/** The server's own writers: their work is every database's, this one's included. */
const SERVER_WRITERS = /: (checkpointer|background writer|walwriter)\s*$/

/**
 * PostgreSQL's CPU spent for one database: its backends and the server's writers (WAL writer, checkpointer,
 * background writer), not the backends of other databases. On a machine shared with other test runs, what their
 * backends use falls on every figure measured over the same seconds, and more on a figure of fewer items. Each
 * process is read by pid and start time, at every reading and once a second between them, so a backend that exits
 * loses at most its last second. `undefined` where `/proc` cannot tell.
 */
export const postgresCpuMeter = (database: string) => {
  const own = ` ${database} `
  const last = new Map<string, number>()
  let total = 0
  let readable = true
  let first = true
  const sample = () => {
    let entries: Array<string>
    try {
      entries = readdirSync("/proc")
    } catch {
      readable = false
      return
    }
    for (const pid of entries) {
      if (!/^\d+$/.test(pid)) continue
      let stat: string
      let title: string
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8")
        if (!stat.includes("(postgres)")) continue
        title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
      } catch {
        continue // gone since the listing
      }
      if (!title.includes(own) && !SERVER_WRITERS.test(title)) continue
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // utime + stime (fields 14–15 of proc(5)); a process is its pid and its start time (field 22).
      const ticks = Number(fields[11]) + Number(fields[12])
      const key = `${pid} ${fields[19]}`
      // Processes there at the first reading count from then; one first seen later began since the last reading.
      total += ticks - (last.get(key) ?? (first ? ticks : 0))
      last.set(key, ticks)
    }
    first = false
  }
  sample()
  const timer = setInterval(sample, 1000)
  timer.unref()
  const ms = (): number | undefined => {
    sample()
    return readable ? (total * 1000) / TICKS_PER_SECOND : undefined
  }
  return {
    ms,
    since: (from: number | undefined): number => {
      const to = ms()
      return from === undefined || to === undefined ? Number.NaN : to - from
    },
    stop: () => clearInterval(timer)
  } as const
}
