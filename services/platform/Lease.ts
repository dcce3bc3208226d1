import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Fiber } from "effect"
import { v7 } from "uuid"
import { Bus } from "./Bus"

/** How long a lease lasts without renewal, and how often its holder renews it. */
export const LEASE_TTL = Duration.seconds(10)
export const LEASE_RENEW = Duration.seconds(3)
export const LEASE_RETRY = Duration.seconds(2)
/** Where a holder that lets a lease go says so, so a waiting instance takes it over at once. */
export const LEASE_RELEASED_SUBJECT = "leases.released"

/**
 * Singleton workers under a lease row: an instance runs `work` only while it holds the lease, renews it every few
 * seconds, and stops the work at once if a renewal fails. When the holder dies its lease expires and another
 * instance takes over; when it shuts down it deletes the lease and says so on the bus, and the others try at once
 * instead of at their next retry. Time comes from Effect's Clock, so tests can move it.
 */
const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const bus = yield* Bus
  const holder = v7()
  // Release notices are counted: a loop that tried while a notice arrived tries again at once, and every waiting
  // loop wakes on each notice (a stopping instance lets its leases go one after another, during its shutdown).
  let notices = 0
  const waiting = new Set<() => void>()
  yield* bus.listen(`${LEASE_RELEASED_SUBJECT}.*`, () => {
    notices += 1
    for (const wake of [...waiting]) wake()
  })
  /** Returns once a notice arrived after `seen` was read (at once if one already did). */
  const noticeSince = (seen: number) =>
    Effect.async<void>((resume) => {
      if (notices !== seen) return resume(Effect.void)
      const wake = () => {
        waiting.delete(wake)
        resume(Effect.void)
      }
      waiting.add(wake)
      return Effect.sync(() => waiting.delete(wake))
    })

  const tryAcquire = Effect.fn("Lease.tryAcquire")(
    function* (name: string) {
      const now = yield* Clock.currentTimeMillis
      const until = now + Duration.toMillis(LEASE_TTL)
      const rows = yield* sql`
        insert into leases (name, holder, expires_at_ms) values (${name}, ${holder}, ${until})
        on conflict (name) do update set holder = excluded.holder, expires_at_ms = excluded.expires_at_ms
          where leases.holder = ${holder} or leases.expires_at_ms < ${now}
        returning holder`
      return rows.length > 0
    },
    Effect.orElseSucceed(() => false)
  )

  const release = (name: string) =>
    sql`delete from leases where name = ${name} and holder = ${holder}`.pipe(
      Effect.zipRight(bus.notify(`${LEASE_RELEASED_SUBJECT}.${name}`, holder)),
      Effect.ignore
    )

  /**
   * Runs `work` whenever this instance holds the lease `name`, forever (until the scope closes). Not a span of its
   * own: it never ends, and the work under it has its own.
   */
  const whileHolding = <E, R>(name: string, work: Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      while (true) {
        const seen = notices
        if (yield* tryAcquire(name)) {
          const fiber = yield* Effect.fork(work)
          // Renew until a renewal fails, then stop the work: another instance may hold the lease by now.
          yield* tryAcquire(name).pipe(
            Effect.delay(LEASE_RENEW),
            Effect.repeat({ while: (held) => held }),
            Effect.onInterrupt(() => Effect.zipRight(Fiber.interrupt(fiber), release(name)))
          )
          yield* Fiber.interrupt(fiber)
          yield* Effect.logWarning(`lost the ${name} lease`)
        }
        // The retry follows Effect's Clock (tests move it); a release notice ends the wait at once.
        yield* Effect.race(Effect.sleep(LEASE_RETRY), noticeSince(seen))
      }
    })

  return { holder, whileHolding, tryAcquire } as const
})

export class Lease extends Effect.Service<Lease>()("deposits/Lease", { scoped: make }) {}
