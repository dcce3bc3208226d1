import { Context, Layer } from "effect"
import { v7 as uuidv7 } from "uuid"

/**
 * Ids are UUIDv7 (time-ordered, so "newest first" is index order) stored as `uuid` and shown with their prefix.
 * One generator service, so tests can make ids deterministic if they need to.
 */
export class Ids extends Context.Tag("deposits/Ids")<Ids, { readonly next: () => string }>() {
  static readonly layer = Layer.succeed(Ids, { next: () => uuidv7() })
}
