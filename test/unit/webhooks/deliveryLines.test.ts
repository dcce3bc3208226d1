import { describe, expect, it } from "@effect/vitest"
import { type DeliveryLines, makeDeliveryLines } from "../../../services/webhooks/DeliveryLines"

const options = {
  perEndpoint: 2,
  maxPerLine: 100,
  maxWaiting: 150,
  drainMs: 1_000,
  unknownAttemptMs: 20,
  minRetryMs: 250,
  maxRetryMs: 60_000
}

/** Fills the endpoint's slots and finishes `n` attempts of `ms` each, so the line learns that pace. */
const learn = (lines: DeliveryLines<string>, endpoint: string, n: number, ms: number) => {
  for (let i = 0; i < n; i++) {
    expect(lines.take(endpoint)).toBe(true)
    expect(lines.give(endpoint, ms).next).toBeUndefined()
  }
}

describe("delivery lines (per endpoint: attempts in flight and the jobs waiting for them)", () => {
  it("holds an endpoint to its slots, lines the rest up in order and hands each to a finishing attempt", () => {
    const lines = makeDeliveryLines<string>(options)
    expect(lines.take("a")).toBe(true)
    expect(lines.take("a")).toBe(true)
    expect(lines.take("a")).toBe(false)
    // Another endpoint is not held up by the first one's cap.
    expect(lines.take("b")).toBe(true)
    expect(lines.wait("a", "job-1")).toBeUndefined()
    expect(lines.wait("a", "job-2")).toBeUndefined()
    expect(lines.waiting("a")).toBe(2)
    // The finishing attempt's slot goes to the first job in line, then the next; slots stay at the cap meanwhile.
    expect(lines.give("a", 5).next).toBe("job-1")
    expect(lines.inFlight("a")).toBe(2)
    expect(lines.give("a", 5).next).toBe("job-2")
    expect(lines.give("a", 5).next).toBeUndefined()
    expect(lines.give("a", 5).next).toBeUndefined()
    expect(lines.inFlight("a")).toBe(0)
    // A job arriving while others wait in line does not jump it, even with a slot free.
    expect(lines.take("a")).toBe(true)
    expect(lines.take("a")).toBe(true)
    expect(lines.wait("a", "job-3")).toBeUndefined()
    expect(lines.take("a")).toBe(false)
  })

  it("sizes a line by its endpoint's pace: a slow endpoint waits in the stream, not here", () => {
    const lines = makeDeliveryLines<string>(options)
    // Pace unknown (20 ms assumed): 2 slots × 1 s / 20 ms = 100 jobs (the cap); a job beyond comes back soon.
    learn(lines, "slow", 0, 0)
    expect(lines.take("slow")).toBe(true)
    expect(lines.take("slow")).toBe(true)
    for (let i = 0; i < 100; i++) expect(lines.wait("slow", `job-${i}`)).toBeUndefined()
    expect(lines.wait("slow", "one-too-many")).toBe(250)
    // The first attempts (connections opening) teach nothing; later ones at 500 ms do: the line keeps 2 × 1 s /
    // 500 ms = 4 jobs, and hands the rest back, to be offered again when the line should have drained.
    expect(lines.give("slow", 500)).toMatchObject({ next: "job-0", evicted: [] })
    const { next, evicted, retryInMs } = lines.give("slow", 500)
    expect(evicted).toHaveLength(0)
    expect(next).toBe("job-1")
    const third = lines.give("slow", 500)
    expect(third.next).toBe("job-2")
    // 98 were waiting: the first 4 stay (job-2 is now in flight), the other 94 go.
    expect(third.evicted).toHaveLength(94)
    expect(third.evicted[0]).toBe("job-6")
    expect(lines.waiting("slow")).toBe(3)
    // 4 waiting × 500 ms / 2 slots = 1 s
    expect(third.retryInMs).toBe(1_000)
    expect(retryInMs).toBe(250)
    expect(lines.wait("slow", "fits")).toBeUndefined()
    expect(lines.wait("slow", "later")).toBe(1_000)
  })

  it("holds at most maxWaiting jobs over every line together", () => {
    const lines = makeDeliveryLines<string>(options)
    for (const endpoint of ["a", "b"]) {
      expect(lines.take(endpoint)).toBe(true)
      expect(lines.take(endpoint)).toBe(true)
    }
    for (let i = 0; i < 100; i++) expect(lines.wait("a", `a-${i}`)).toBeUndefined()
    for (let i = 0; i < 50; i++) expect(lines.wait("b", `b-${i}`)).toBeUndefined()
    expect(lines.wait("b", "b-over")).toBe(250)
    // Taking every job out (a shutdown) frees the room.
    expect(lines.takeAllWaiting()).toHaveLength(150)
    expect(lines.wait("b", "b-again")).toBeUndefined()
  })
})
