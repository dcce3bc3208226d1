import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * A new payout address takes no request until `held_until` (infra/decisions/0077-payout-address-hold.md): the
 * time it was added plus `PAYOUT_ADDRESS_HOLD_SECONDS`, null when it was added without a hold (before this
 * migration, or with the setting at 0). The create's group commit refuses a held one like a disabled one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table payout_addresses add column held_until timestamptz`
  yield* applyFunctionFiles(["create_deposit_requests"])
})
