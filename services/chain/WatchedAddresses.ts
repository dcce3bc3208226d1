import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { type Address, getAddress } from "viem"

/** How long an address stays watched after its request last changed: late transfers are found and returned. */
export const RETENTION_DAYS = 30
/** How often the in-memory map of watched addresses is read whole; in between, only unknown `to`s are looked up. */
export const FULL_REFRESH_MS = 5 * 60_000

/**
 * The watched addresses (lower-case address → request id), held in memory between full reads (a full read also
 * drops addresses past retention). A `to` the map does not know is looked up in the database in the same step,
 * after the logs were read: an address is shown to a payer only once committed, so a transfer to it cannot be
 * missed. The map is only a cache in front of that lookup, so after the first read the full reads (the whole
 * table) run beside the steps, not inside one, and replace the map when done.
 */
export const makeWatchedAddresses = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  let addresses = new Map<string, string>()
  let fullReadAt = Number.NEGATIVE_INFINITY
  let fullReadRunning = false

  const readAllWatched = (now: number) =>
    Effect.gen(function* () {
      const since = new Date(now - RETENTION_DAYS * 86_400_000)
      const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, lower(deposit_address) as deposit_address from deposit_requests
            where deposit_address is not null
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
      const next = new Map<string, string>()
      // Built in slices, so a step running beside it is not held for the whole map.
      for (let i = 0; i < rows.length; i += 10_000) {
        const end = Math.min(rows.length, i + 10_000)
        for (let j = i; j < end; j++) next.set(rows[j]!.deposit_address, rows[j]!.id)
        yield* Effect.yieldNow()
      }
      return next
    })

  /** The map, sure to hold every watched address among `to` (lower-case). */
  const watched = Effect.fn("ChainWatcher.watched")(function* (to: ReadonlyArray<Address>) {
    const now = yield* Clock.currentTimeMillis
    if (fullReadAt === Number.NEGATIVE_INFINITY) {
      addresses = yield* readAllWatched(now)
      fullReadAt = now
    } else if (now - fullReadAt > FULL_REFRESH_MS && !fullReadRunning) {
      fullReadRunning = true
      yield* Effect.forkDaemon(
        readAllWatched(now).pipe(
          Effect.tap((next) =>
            Effect.sync(() => {
              addresses = next
              fullReadAt = now
            })
          ),
          Effect.catchAllCause((cause) => Effect.logWarning("reading the watched addresses failed", cause)),
          Effect.ensuring(Effect.sync(() => (fullReadRunning = false)))
        )
      )
    }
    const unknownSet = new Set<string>()
    for (const a of to) if (!addresses.has(a)) unknownSet.add(a)
    if (unknownSet.size === 0) return addresses as ReadonlyMap<string, string>
    const since = new Date(now - RETENTION_DAYS * 86_400_000)
    // Deposit addresses are stored as derived (EIP-55): the unique index serves the checksummed form.
    const unknown = [...unknownSet].map((a) => getAddress(a))
    for (let i = 0; i < unknown.length; i += 5000) {
      const rows = yield* sql<{ id: string; deposit_address: string }>`
            select id, deposit_address from deposit_requests
            where deposit_address in ${sql.in(unknown.slice(i, i + 5000))}
              and (status in ('ready', 'partially_deposited', 'deposited') or updated_at > ${since})`
      for (const r of rows) addresses.set(r.deposit_address.toLowerCase(), r.id)
    }
    return addresses as ReadonlyMap<string, string>
  })

  return { watched } as const
})
