import { createHash } from "node:crypto"

/**
 * Where each lifecycle type sorts among its request's events (the id's order is the event list's order), roughly
 * the order a request goes through them. A type not listed sorts last.
 */
const RANK: Readonly<Record<string, number>> = {
  "verification.approved": 1,
  "deposit_request.ready": 2,
  "deposit_request.likely_unsolicited": 3,
  "deposit_request.deposited": 4,
  "deposit_request.settled": 5,
  "deposit_request.expired": 6,
  "deposit_request.needs_attention": 7,
  "deposit_request.recovered_funds": 8,
  "deposit_request.returned": 9
}

/**
 * The id of a request's lifecycle event, derived from the request and the event's dedupe key (at most one event per
 * pair, a unique index holds it), never drawn at random: a step applied again after a restore from an older backup
 * raises its event under the id receivers already had, so they dedupe it. Laid out as a UUIDv8 that keeps v7's
 * order by time at the request's grain: the request id's 48-bit creation instant, then the type's rank, then a
 * SHA-256 of the pair.
 */
export const lifecycleEventId = (requestId: string, type: string, dedupe: string): string => {
  const request = requestId.replace(/-/g, "")
  const digest = createHash("sha256").update(`${request}:${dedupe}`).digest("hex")
  const rank = (RANK[type] ?? 15).toString(16)
  const variant = ((Number.parseInt(digest[3]!, 16) & 0x3) | 0x8).toString(16)
  const hex = `${request.slice(0, 12)}8${rank}${digest.slice(0, 2)}${variant}${digest.slice(4, 19)}`
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}
