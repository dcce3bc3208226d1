import type { DepositRequestRow } from "./ActorRow"

/**
 * Sized to hold every open request at the production scale the watcher is built for: a request is paid minutes
 * after its wallet is attested, so at chain pace a smaller memory has forgotten it by then and every such commit
 * reads rows first (README: Decisions).
 */
export const REMEMBERED_ACTORS = 100_000

/**
 * The rows of the requests this instance stepped last, by id. An entry is only a guess: every write names the
 * version it was stepped from and `apply_actor_steps_v3` refuses it when the row moved on (another instance, the
 * merchant's update), so a stale entry costs a read and a second try, never a lost update.
 */
export interface ActorMemory {
  readonly get: (id: string) => DepositRequestRow | undefined
  /** Keeps the row unless a newer version of it is held (an older commit finishing late). */
  readonly remember: (row: DepositRequestRow) => void
  readonly forget: (id: string) => void
}

/** Whether version `a` is above `b`: both are PostgreSQL's text of a bigint, so no leading zeros or signs. */
const newerVersion = (a: string, b: string) => a.length > b.length || (a.length === b.length && a > b)

export const makeActorMemory = (capacity: number = REMEMBERED_ACTORS): ActorMemory => {
  /** Map order is insertion order: re-inserting on use keeps the least recently used first, to drop first. */
  const rows = new Map<string, DepositRequestRow>()
  return {
    get: (id) => rows.get(id),
    remember: (row) => {
      const held = rows.get(row.id)
      if (held !== undefined) {
        if (newerVersion(held.version, row.version)) return
        rows.delete(row.id)
      }
      rows.set(row.id, row)
      if (rows.size > capacity) rows.delete(rows.keys().next().value!)
    },
    forget: (id) => {
      rows.delete(id)
    }
  }
}
