/** The public API's shapes the dashboard reads (see /openapi.json); amounts are base-unit strings. */
export interface Account {
  readonly id: string
  readonly name: string
  readonly environment: "sandbox" | "production"
  readonly created_at: string
}

export interface Attention {
  readonly code: string
  readonly message: string
  readonly since: string
  readonly resolution: string
}

export interface DepositRequest {
  readonly id: string
  readonly status: string
  readonly amount: string
  readonly amount_base_units: string
  readonly received: string
  readonly received_base_units: string
  readonly heading: string
  readonly reference: string
  readonly metadata: Record<string, unknown>
  readonly customer_id: string | null
  readonly issuer_id: string
  readonly payer_policy_mode: string
  readonly payer_reference: string | null
  readonly verification_completed_at: string | null
  readonly likely_unsolicited_at: string | null
  readonly payer_wallet: string | null
  readonly address: string | null
  readonly wallet_bound_at: string | null
  readonly expires_at: string
  readonly created_at: string
  readonly payout_address_id: string
  readonly expected_email: string | null
  readonly return_url: string | null
  readonly attention: Attention | null
  readonly settlement: {
    readonly payout_address: string
    readonly amount: string
    readonly amount_base_units: string
    readonly transaction_hash: string | null
    readonly block_number: string | null
    readonly settled_at: string | null
  } | null
  readonly chain_id: number
  readonly checkout_url: string
  readonly version: string
  readonly updated_at: string
  readonly merchant_session_secret?: string
}

export interface Page<K extends string, T> {
  readonly next_cursor: string | null
  /** Lists that can be followed live carry a version (`wait_for=change&version=`). */
  readonly version?: string
  readonly items: ReadonlyArray<T>
  readonly key: K
}

export interface Transfer {
  readonly direction: "in" | "out"
  readonly kind: "payment" | "settlement" | "return"
  readonly amount: string
  readonly amount_base_units: string
  readonly from: string
  readonly to: string
  readonly transaction_hash: string
  readonly log_index: number | null
  readonly block_number: string | null
  readonly finality: string
  readonly at: string
}

export interface Recovery {
  readonly id: string
  readonly amount_base_units: string
  readonly reason: string
  readonly transaction_hash: string
  readonly block_number: string
  readonly recovered_at: string
}

export interface VerificationAttempt {
  readonly id: string
  readonly kind: string
  readonly outcome: string
  readonly reason: string | null
  readonly wallet: string | null
  readonly attempted_at: string
}

export interface Attachment {
  readonly id: string
  readonly file_name: string
  readonly size_bytes: number
  readonly status: string
  readonly rejection_reason: string | null
  readonly upload: {
    readonly url: string
    readonly method: "PUT"
    readonly headers: Record<string, string>
  } | null
  readonly created_at: string
}

export interface ApiEvent {
  readonly id: string
  readonly type: string
  readonly occurred_at: string
  readonly data: {
    readonly deposit_request?: { readonly id: string; readonly status: string }
    readonly webhook_id?: string
  }
}

export interface WebhookEndpoint {
  readonly id: string
  readonly url: string
  readonly created_at: string
  readonly disabled_at: string | null
  readonly secret?: string
}

export interface Delivery {
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly redelivery: boolean
  readonly outcome: string
  readonly response_status: number | null
  readonly error_kind: string | null
  readonly error_message: string | null
  /** Added by the lists work (one sentence of what went wrong); shown when present. */
  readonly error?: string | null
  readonly attempted_at: string
  readonly duration_ms: number
  readonly next_attempt_at: string | null
}

export interface SignedIn {
  readonly session_token: string
  readonly expires_at: string
  readonly member: { readonly id: string; readonly email: string }
  readonly account: Account
}
