import type { CreatedDepositRequest } from "../../../src/http/DepositRequests/Api"

/** A fresh request as the service answers it (every field, the nulls of a new one). */
export const created: typeof CreatedDepositRequest.Type = {
  id: "dr_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5b",
  status: "awaiting_payer",
  amount: "12.500000",
  amount_base_units: "12500000",
  received: "0.000000",
  received_base_units: "0",
  heading: "",
  reference: "",
  metadata: {},
  customer_id: null,
  issuer_id: "iss_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5c",
  payer_policy_mode: "none",
  payer_reference: null,
  verification_completed_at: null,
  likely_unsolicited_at: null,
  payer_wallet: null,
  address: null,
  wallet_bound_at: null,
  expires_at: "2026-11-23T19:00:00Z",
  created_at: "2026-11-22T19:00:00Z",
  payout_address_id: "pa_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5d",
  expected_email: null,
  return_url: null,
  attention: null,
  settlement: null,
  chain_id: 10143,
  checkout_url: "http://127.0.0.1:8080/checkout/dr_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5b",
  version: "1",
  updated_at: "2026-11-22T19:00:00Z"
}
