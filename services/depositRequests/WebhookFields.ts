// Its own module: the contract (src/api) and the typed clients built from it read it without the wire code.

/** The fields a webhook payload carries: exactly the spec's subset, never the expected email or other private data. */
export const webhookFields = [
  "id",
  "status",
  "amount",
  "amount_base_units",
  "received",
  "received_base_units",
  "heading",
  "reference",
  "metadata",
  "customer_id",
  "issuer_id",
  "payer_policy_mode",
  "payer_reference",
  "verification_completed_at",
  "likely_unsolicited_at",
  "payer_wallet",
  "address",
  "wallet_bound_at",
  "expires_at",
  "created_at"
] as const
