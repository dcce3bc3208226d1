import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * A deposit request may carry the merchant's `return_url`, the link the hosted checkout offers the payer back to
 * the shop (infra/decisions/0051-return-url.md). Nullable, no default: adding it rewrites no row. The create's
 * group commit writes it, so `create_deposit_requests` takes it from its input (same name and arguments: a build
 * still calling it without the field inserts null).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table deposit_requests add column return_url text`
  yield* applyFunctionFiles(["create_deposit_requests"])
})
