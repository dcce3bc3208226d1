import { readFileSync } from "node:fs"

/** A process's resident set size in bytes now, from /proc (Linux). */
export const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  if (line === undefined) throw new Error(`no VmRSS for process ${pid}`)
  return Number(line.replace(/\D+/g, "")) * 1024
}

export interface RssSamples {
  /** Bytes, in sampling order. */
  readonly samples: ReadonlyArray<number>
  readonly first: number
  readonly peak: number
  readonly last: number
  /** The sample at a fraction (0–1) of the sampling time: 0.25 is a quarter of the way through. */
  readonly at: (fraction: number) => number
}

/**
 * Samples another process's RSS every `everyMs` until stopped: for a test or a bench that must show a server's
 * memory flat while it streams (an export, a report), sampled from outside so the sampler's own heap is not counted.
 */
export const sampleRss = (pid: number, everyMs = 100) => {
  const samples: Array<number> = [rssOf(pid)]
  const timer = setInterval(() => {
    try {
      samples.push(rssOf(pid))
    } catch {
      // The process exited; the samples so far stand.
    }
  }, everyMs)
  return {
    stop: (): RssSamples => {
      clearInterval(timer)
      try {
        samples.push(rssOf(pid))
      } catch {
        // exited
      }
      return {
        samples,
        first: samples[0]!,
        peak: Math.max(...samples),
        last: samples.at(-1)!,
        at: (fraction) => samples[Math.min(samples.length - 1, Math.floor(samples.length * fraction))]!
      }
    }
  }
}
