import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What Circle's FiatToken can refuse (infra/decisions/0071-token-pause-and-blacklists.md):
 * - `held_transfers`: a settlement or return the treasury did not sign because a party is blacklisted or its
 *   simulation kept reverting; its request is paused with the reason, and a resume puts the command back.
 * - `token_status`: whether the token is paused, as the treasury last read it, for every instance's health and
 *   metrics (the treasury runs on one instance, under a lease).
 * - `payout_addresses.disabled_reason`: why an address was disabled (the token's blacklister blocked it).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table held_transfers (
      command_id text primary key,
      deposit_request_id uuid not null,
      topic text not null,
      payload jsonb not null,
      code text not null,
      reason text not null,
      held_at timestamptz not null,
      trace_parent text
    )`
  yield* sql`create index held_transfers_request on held_transfers (deposit_request_id)`
  yield* sql`
    create table token_status (
      token text primary key,
      paused boolean not null,
      changed_at timestamptz not null,
      checked_at timestamptz not null
    )`
  yield* sql`alter table payout_addresses add column disabled_reason text`
})
