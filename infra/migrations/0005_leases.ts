import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Leases: one active instance for each singleton worker (scheduler, relays, watcher); another takes over on expiry. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table leases (
      name text primary key,
      holder text not null,
      expires_at_ms bigint not null
    )`
})
