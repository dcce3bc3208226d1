/**
 * One instance's deliveries per webhook endpoint: the attempts in flight (at most `perEndpoint`, so a hung endpoint
 * never holds every worker) and a line of jobs taken from the stream while the endpoint was at that cap. A job in
 * line is handed to the next worker that finishes an attempt to the same endpoint. Before the line, such a job went
 * back to the stream for a moment: a burst to one endpoint then cost many redeliveries per delivery, and that
 * churn, not the wire, set the pace (decision 0035).
 *
 * A line is as long as its endpoint drains in `drainMs` at its recent pace (an average of its attempts' durations,
 * once its first `perEndpoint` attempts here, which open the connections, are over; `unknownAttemptMs` until then),
 * at most `maxPerLine`, and all lines together hold at most `maxWaiting` (the stream's unacknowledged messages are
 * shared by every endpoint, so lines must not take them all). A job that finds its line full is offered again by
 * the stream when the line should have drained, not sooner.
 */
export interface DeliveryLinesOptions {
  readonly perEndpoint: number
  readonly maxPerLine: number
  readonly maxWaiting: number
  readonly drainMs: number
  /** The pace assumed for an endpoint with no attempt seen yet. */
  readonly unknownAttemptMs: number
  /** The shortest and longest wait before a job that found its line full is offered again. */
  readonly minRetryMs: number
  readonly maxRetryMs: number
}

export const makeDeliveryLines = <A>(options: DeliveryLinesOptions) => {
  interface Line {
    inFlight: number
    readonly waiting: Array<A>
    /** The endpoint's recent pace; `undefined` until its first attempts here are over (they open connections). */
    attemptMs: number | undefined
    attemptsSeen: number
  }
  const lines = new Map<string, Line>()
  let waitingTotal = 0

  const lineOf = (endpoint: string) => {
    let line = lines.get(endpoint)
    if (line === undefined) {
      line = { inFlight: 0, waiting: [], attemptMs: undefined, attemptsSeen: 0 }
      lines.set(endpoint, line)
    }
    return line
  }
  const dropIfIdle = (endpoint: string, line: Line) => {
    if (line.inFlight === 0 && line.waiting.length === 0) lines.delete(endpoint)
  }
  const capacity = (line: Line) =>
    Math.min(
      options.maxPerLine,
      Math.max(
        options.perEndpoint,
        Math.floor((options.perEndpoint * options.drainMs) / (line.attemptMs ?? options.unknownAttemptMs))
      )
    )

  /** When a job that found the line full should be offered again: when the line should have drained. */
  const retryDelay = (line: Line) => {
    // Before the endpoint's pace is known the line's length is a guess: the job is offered again soon.
    if (line.attemptMs === undefined) return options.minRetryMs
    const drainsInMs = (line.waiting.length * line.attemptMs) / options.perEndpoint
    return Math.round(Math.min(options.maxRetryMs, Math.max(options.minRetryMs, drainsInMs)))
  }

  return {
    /** Takes one of the endpoint's slots if it has a free one (and nobody is in line before the caller). */
    take: (endpoint: string): boolean => {
      const line = lineOf(endpoint)
      if (line.inFlight >= options.perEndpoint || line.waiting.length > 0) return false
      line.inFlight++
      return true
    },
    /**
     * Puts a job in the endpoint's line (`undefined`), or answers how long the stream should keep it before offering
     * it again (the line is full).
     */
    wait: (endpoint: string, item: A): number | undefined => {
      const line = lineOf(endpoint)
      if (line.waiting.length < capacity(line) && waitingTotal < options.maxWaiting) {
        line.waiting.push(item)
        waitingTotal++
        return undefined
      }
      return retryDelay(line)
    },
    /**
     * Gives a slot back (with the duration of the attempt made in it, if one was) and answers the next job in line,
     * which keeps the slot: the caller works on it next. When the attempt showed the endpoint slower than its line
     * was sized for, the jobs beyond its new length leave the line (`evicted`, with how long the stream should keep
     * them), so a hung endpoint does not hold what a fast one was allowed.
     */
    give: (
      endpoint: string,
      attemptMs: number | undefined
    ): { readonly next: A | undefined; readonly evicted: ReadonlyArray<A>; readonly retryInMs: number } => {
      const line = lineOf(endpoint)
      if (attemptMs !== undefined) {
        line.attemptsSeen++
        // The first attempts open the connections (TLS handshakes): their pace is not the endpoint's.
        if (line.attemptsSeen > options.perEndpoint) {
          const ms = Math.max(1, attemptMs)
          line.attemptMs = line.attemptMs === undefined ? ms : line.attemptMs * 0.7 + ms * 0.3
        }
      }
      const keep = capacity(line)
      const evicted = line.waiting.length > keep ? line.waiting.splice(keep) : []
      waitingTotal -= evicted.length
      const retryInMs = retryDelay(line)
      const next = line.waiting.shift()
      if (next !== undefined) {
        waitingTotal--
        return { next, evicted, retryInMs }
      }
      line.inFlight--
      dropIfIdle(endpoint, line)
      return { next: undefined, evicted, retryInMs }
    },
    /** Every job in line, taken out (on shutdown, to hand them back to the stream). */
    takeAllWaiting: (): Array<A> => {
      const all: Array<A> = []
      for (const [endpoint, line] of lines) {
        all.push(...line.waiting.splice(0))
        dropIfIdle(endpoint, line)
      }
      waitingTotal = 0
      return all
    },
    forEachWaiting: (f: (item: A) => void) => {
      for (const line of lines.values()) for (const item of line.waiting) f(item)
    },
    inFlight: (endpoint: string) => lines.get(endpoint)?.inFlight ?? 0,
    waiting: (endpoint: string) => lines.get(endpoint)?.waiting.length ?? 0
  } as const
}
export type DeliveryLines<A> = ReturnType<typeof makeDeliveryLines<A>>
