import { Effect } from "effect"
import { Bus } from "../platform/Bus"
import type { Identity } from "./Identity"

const SUBJECT = "deposits.credentials.changed"
/** Longest a cached credential is trusted without a re-read, should a change notice ever be lost. */
export const CREDENTIAL_TTL_MS = 10_000

interface Entry {
  readonly identity: Identity
  /** When the credential itself stops working (grace end, session expiry), or Infinity. */
  readonly validUntilMs: number
  readonly cachedAtMs: number
}

/**
 * Known-good credentials by digest, so API traffic does not read the database per request. Any change to an
 * account's credentials (issue, rotation, revocation, logout) drops that account's entries on this instance at
 * once and on every other instance through a bus notice; a lost notice is bounded by the TTL. Unknown
 * credentials are never cached, so guessing cannot fill memory.
 */
export class CredentialCache extends Effect.Service<CredentialCache>()("deposits/CredentialCache", {
  scoped: Effect.gen(function* () {
    const bus = yield* Bus
    const entries = new Map<string, Entry>()
    const dropAccount = (accountId: string) => {
      for (const [key, entry] of entries) if (entry.identity.accountId === accountId) entries.delete(key)
    }
    yield* bus.listen(SUBJECT, (_subject, accountId) => dropAccount(accountId))

    // Every authenticated request looks its credential up: untraced, since a span would cost more than the map read.
    const lookup = (digestHex: string, nowMs: number) =>
      Effect.sync(() => {
        const entry = entries.get(digestHex)
        if (entry === undefined) return undefined
        if (
          nowMs >= entry.validUntilMs ||
          nowMs - entry.cachedAtMs > CREDENTIAL_TTL_MS ||
          nowMs < entry.cachedAtMs
        ) {
          entries.delete(digestHex)
          return undefined
        }
        return entry.identity
      })

    const remember = Effect.fn("CredentialCache.remember")((digestHex: string, entry: Entry) =>
      Effect.sync(() => {
        entries.set(digestHex, entry)
      })
    )

    /** After a committed change to an account's credentials. */
    const changed = Effect.fn("CredentialCache.changed")(function* (accountId: string) {
      dropAccount(accountId)
      yield* bus.notify(SUBJECT, accountId)
    })

    return { lookup, remember, changed } as const
  })
}) {}
