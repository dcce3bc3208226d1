import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A mailed code remembers the browser that asked for it (infra/decisions/0074-sign-in-codes-and-forwarded-links.md):
 * the digest of the binding secret the start of the sign-in handed that browser, and the client address and
 * User-Agent it came from, which a confirmation page shows when the link is opened anywhere else. Rows written
 * before have none: their links need the confirmation.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table sign_in_codes
      add column binding_digest bytea,
      add column client text,
      add column user_agent text`
})
