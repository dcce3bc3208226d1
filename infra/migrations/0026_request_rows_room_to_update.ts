import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A request row is rewritten on every step (snapshot, version, received total), most of them changing no indexed
 * column (a second credit: same status, same address). At the default fillfactor of 100 a page has no room for the
 * new version, so such an update moved the row to another page and wrote an entry into each of the table's six
 * indexes; with room kept on the page it stays heap-only (HOT) and writes none, which the actors benchmark showed
 * in more heap-only updates and less of PostgreSQL's CPU per event (infra/decisions). Existing pages keep their layout until rewritten
 * (a `vacuum full` or `pg_repack`); new ones leave the room.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe("alter table deposit_requests set (fillfactor = 70)")
})
