import { randomFillSync } from "node:crypto"
import { Effect } from "effect"
import { v7 as uuidv7 } from "uuid"

// uuid's default rng calls WebCrypto getRandomValues for 16 bytes on every id; draw them from a 4 KiB pool filled
// by one randomFillSync per 256 ids instead (decision 0024).
const pool = new Uint8Array(4096)
let poolAt = pool.length
const pooledRandom = (): Uint8Array => {
  if (poolAt === pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  poolAt += 16
  return pool.subarray(poolAt - 16, poolAt)
}

/** A fresh UUIDv7 (time-ordered, random bits from the pool). */
export const newUuid7 = (): string => uuidv7({ rng: pooledRandom })

/**
 * Ids are UUIDv7 (time-ordered, so "newest first" is index order) stored as `uuid` and shown with their prefix.
 * One generator service, so tests can make ids deterministic if they need to.
 */
export class Ids extends Effect.Service<Ids>()("deposits/Ids", {
  // A plain function, not an Effect: every insert draws one, often several per request (a memory read).
  succeed: { next: newUuid7 }
}) {}
