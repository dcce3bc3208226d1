import { Effect } from "effect"

/**
 * A polling loop's wake-up: `idle(ms)` returns after `ms`, or as soon as `wake()` (every idler) or `wakeOne()`
 * is called (by a notice that there is work). A wake with nobody idle is kept for the next `idle`, so a notice
 * between two polls is not lost. The poll interval stays as the safety net for notices that never arrive.
 */
export const makeWorkSignal = () => {
  let pending = false
  const idlers = new Set<() => void>()
  const wake = () => {
    if (idlers.size === 0) {
      pending = true
      return
    }
    for (const resume of [...idlers]) resume()
  }
  /** Wakes one idler only (the longest idle), or is kept for the next `idle` like `wake`. */
  const wakeOne = () => {
    const first = idlers.values().next()
    if (first.done) pending = true
    else first.value()
  }
  const idle = (ms: number) =>
    Effect.async<void>((resume) => {
      if (pending) {
        pending = false
        return resume(Effect.void)
      }
      const done = () => {
        clearTimeout(timer)
        idlers.delete(done)
        resume(Effect.void)
      }
      const timer = setTimeout(done, ms)
      idlers.add(done)
      return Effect.sync(() => {
        clearTimeout(timer)
        idlers.delete(done)
      })
    })
  return { wake, wakeOne, idle } as const
}
