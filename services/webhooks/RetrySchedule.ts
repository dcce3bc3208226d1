/**
 * The retry schedule: the first retry 30 s after the first failure, each gap twice the one before, capped at one
 * hour, each gap jittered by ±20%; 12 attempts in all, then the delivery has failed for good. Without jitter the
 * 12th attempt comes about 5.3 hours after the first.
 */
export const MAX_ATTEMPTS = 12
export const FIRST_GAP_MS = 30_000
export const FACTOR = 2
export const MAX_GAP_MS = 60 * 60 * 1000
export const JITTER = 0.2

/** The gap after the `attempt`-th failed attempt (1-based), before jitter. */
export const baseGapMs = (attempt: number, firstGapMs = FIRST_GAP_MS) =>
  Math.min(MAX_GAP_MS, firstGapMs * FACTOR ** (attempt - 1))

/** The jittered gap; `random` in [0, 1) is passed in so the schedule stays testable. */
export const gapMs = (attempt: number, random: number, firstGapMs = FIRST_GAP_MS) =>
  Math.round(baseGapMs(attempt, firstGapMs) * (1 - JITTER + 2 * JITTER * random))
