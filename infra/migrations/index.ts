import { Migrator } from "@effect/sql"
import accounts from "./0001_accounts"
import merchantResources from "./0002_merchant_resources"
import depositRequests from "./0003_deposit_requests"
import payer from "./0004_payer"
import leases from "./0005_leases"
import webhooks from "./0006_webhooks"
import mailboxCodes from "./0007_mailbox_codes"
import chain from "./0008_chain"
import transfers from "./0009_transfers"
import rateBatches from "./0010_rate_batches"
import transferReplacements from "./0011_transfer_replacements"
import creditReorgs from "./0012_credit_reorgs"
import createFunction from "./0013_create_function"
import partialUniqueDepositSlots from "./0014_partial_unique_deposit_slots"
import cancelledDeliveries from "./0015_cancelled_deliveries"
import attemptWallets from "./0016_attempt_wallets"
import traceParents from "./0017_trace_parents"
import attachments from "./0018_attachments"
import actorStepsFunction from "./0019_actor_steps_function"
import transferNonces from "./0020_transfer_nonces"
import streamPublishing from "./0021_stream_publishing"
import creditRequestsUnchecked from "./0022_credit_requests_unchecked"
import actorRowsCheckedOnce from "./0023_actor_rows_checked_once"
import actorRowsFoundById from "./0024_actor_rows_found_by_id"
import actorStepsInThreeStatements from "./0025_actor_steps_in_three_statements"
import requestRowsRoomToUpdate from "./0026_request_rows_room_to_update"
import actorStepsSlimInput from "./0027_actor_steps_slim_input"
import actorStepsGenericPlans from "./0028_actor_steps_generic_plans"
import actorStepsDedupeProbes from "./0029_actor_steps_dedupe_probes"
import createReferencesProbed from "./0030_create_references_probed"
import functionsFromFiles from "./0031_functions_from_files"
import returnUrls from "./0032_return_urls"
import membersAndSignIn from "./0033_members_and_sign_in"
import listFilters from "./0034_list_filters"
import stepHistory from "./0035_step_history"
import webhookListeners from "./0036_webhook_listeners"
import tokenControls from "./0037_token_controls"
import dropTakeRateToken from "./0038_drop_take_rate_token"
import signInBoundToBrowser from "./0040_sign_in_bound_to_browser"
import auditLog from "./0041_audit_log"
import payoutAddressHold from "./0042_payout_address_hold"
import listSearch from "./0043_list_search"
import webhookSecretRotation from "./0044_webhook_secret_rotation"
import memberNoticePreferences from "./0045_member_notice_preferences"
import webhookEnabledEvents from "./0046_webhook_enabled_events"
import accountSummary from "./0047_account_summary"
import needingAttentionIndex from "./0048_needing_attention_index"
import readsBoundedByPage from "./0049_reads_bounded_by_page"
import reconciliationBooks from "./0051_reconciliation_books"
import requestLedgerIndexes from "./0052_request_ledger_indexes"
import accountActivity from "./0054_account_activity"
import reconciliationAccountTotals from "./0055_reconciliation_account_totals"

/** Every migration, in order. The key's leading number is its id in `effect_sql_migrations`. */
export const migrations = {
  "0001_accounts": accounts,
  "0002_merchant_resources": merchantResources,
  "0003_deposit_requests": depositRequests,
  "0004_payer": payer,
  "0005_leases": leases,
  "0006_webhooks": webhooks,
  "0007_mailbox_codes": mailboxCodes,
  "0008_chain": chain,
  "0009_transfers": transfers,
  "0010_rate_batches": rateBatches,
  "0011_transfer_replacements": transferReplacements,
  "0012_credit_reorgs": creditReorgs,
  "0013_create_function": createFunction,
  "0014_partial_unique_deposit_slots": partialUniqueDepositSlots,
  "0015_cancelled_deliveries": cancelledDeliveries,
  "0016_attempt_wallets": attemptWallets,
  "0017_trace_parents": traceParents,
  "0018_attachments": attachments,
  "0019_actor_steps_function": actorStepsFunction,
  "0020_transfer_nonces": transferNonces,
  "0021_stream_publishing": streamPublishing,
  "0022_credit_requests_unchecked": creditRequestsUnchecked,
  "0023_actor_rows_checked_once": actorRowsCheckedOnce,
  "0024_actor_rows_found_by_id": actorRowsFoundById,
  "0025_actor_steps_in_three_statements": actorStepsInThreeStatements,
  "0026_request_rows_room_to_update": requestRowsRoomToUpdate,
  "0027_actor_steps_slim_input": actorStepsSlimInput,
  "0028_actor_steps_generic_plans": actorStepsGenericPlans,
  "0029_actor_steps_dedupe_probes": actorStepsDedupeProbes,
  "0030_create_references_probed": createReferencesProbed,
  "0031_functions_from_files": functionsFromFiles,
  "0032_return_urls": returnUrls,
  "0033_members_and_sign_in": membersAndSignIn,
  "0034_list_filters": listFilters,
  "0035_step_history": stepHistory,
  "0036_webhook_listeners": webhookListeners,
  "0037_token_controls": tokenControls,
  "0038_drop_take_rate_token": dropTakeRateToken,
  "0040_sign_in_bound_to_browser": signInBoundToBrowser,
  "0041_audit_log": auditLog,
  "0042_payout_address_hold": payoutAddressHold,
  "0043_list_search": listSearch,
  "0044_webhook_secret_rotation": webhookSecretRotation,
  "0045_member_notice_preferences": memberNoticePreferences,
  "0046_webhook_enabled_events": webhookEnabledEvents,
  "0047_account_summary": accountSummary,
  "0048_needing_attention_index": needingAttentionIndex,
  "0049_reads_bounded_by_page": readsBoundedByPage,
  "0051_reconciliation_books": reconciliationBooks,
  "0052_request_ledger_indexes": requestLedgerIndexes,
  "0054_account_activity": accountActivity,
  "0055_reconciliation_account_totals": reconciliationAccountTotals
}

/**
 * Runs the migrations not yet recorded, in order, in one transaction: the service's (`services/platform/Database.ts`)
 * and the tooling's, which may not import services.
 */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations) })
