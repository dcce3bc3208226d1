import { Clock, Effect } from "effect"

/**
 * A wall clock the test can move: frozen at a chosen instant or shifted by an offset. Sleeping still uses real
 * time, so timeouts behave; only "what time is it" is controlled.
 */
export class ControlledClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private readonly real = Clock.make()
  private frozenAt: number | undefined
  private offsetMs = 0

  freeze(atMs = Date.now()) {
    this.frozenAt = atMs
  }
  advance(ms: number) {
    if (this.frozenAt !== undefined) this.frozenAt += ms
    else this.offsetMs += ms
  }
  unsafeCurrentTimeMillis(): number {
    return this.frozenAt ?? this.real.unsafeCurrentTimeMillis() + this.offsetMs
  }
  get currentTimeMillis() {
    return Effect.sync(() => this.unsafeCurrentTimeMillis())
  }
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.unsafeCurrentTimeMillis()) * 1_000_000n
  }
  get currentTimeNanos() {
    return Effect.sync(() => this.unsafeCurrentTimeNanos())
  }
  sleep(duration: Parameters<Clock.Clock["sleep"]>[0]) {
    return this.real.sleep(duration)
  }
}
