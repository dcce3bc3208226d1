import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { applyFunctionFiles } from "./storedFunctions"

/**
 * The step history (infra/decisions/0066-step-history.md): every event a request's actor applied, kept with the
 * version it made, its payload, the commit's instant, the instance that applied it, and the status and snapshot
 * it left, so the inspector can replay and explain a request after the fact. Written in the actor's one statement
 * (`apply_actor_steps_v3`) and, for version 1, by the create's statement; swept after `STEP_HISTORY_DAYS`.
 *
 * - No foreign key to `deposit_requests`: its writers have just locked or inserted the request (as 0023 did for
 *   the dedupe records), and the sweeper deletes by age alone.
 * - `seq` orders the live feeds across requests (the cursor of `/v1/lifecycle/steps`); the account's feed and the
 *   operators' all-accounts feed each read one index in that order, and the sweeper deletes the oldest by it.
 * - `apply_actor_steps_v2` stays: a build still running during the deploy calls it (it writes no history).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table deposit_request_steps (
      deposit_request_id uuid not null,
      version bigint not null,
      seq bigint generated always as identity,
      account_id uuid not null,
      event_id text not null,
      -- the event as applied: its type and full payload (the create's is { "type": "xstate.init" })
      event jsonb not null,
      at timestamptz not null,
      instance text not null,
      -- what the step left: the status column and the persisted snapshot of the row at this version
      status text not null,
      snapshot jsonb not null,
      primary key (deposit_request_id, version)
    )`
  yield* sql`create index deposit_request_steps_account on deposit_request_steps (account_id, seq)`
  yield* sql`create unique index deposit_request_steps_seq on deposit_request_steps (seq)`
  yield* applyFunctionFiles(["apply_actor_steps_v3"])
})
