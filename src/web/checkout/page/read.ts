/** The payer read of a deposit request, as the payer routes answer it. */
export interface PayerRead {
  readonly id: string
  readonly status: string
  readonly amount: string
  readonly amount_base_units: string
  readonly received: string
  readonly received_base_units: string
  readonly heading: string
  readonly issuer_display_name: string | null
  readonly issuer_support_email: string | null
  readonly issuer_support_url: string | null
  readonly return_url: string | null
  readonly payer_policy_mode: "none" | "mailbox" | "merchant_session"
  readonly proof_required: "mailbox" | "merchant_session" | null
  readonly wallet_required: boolean
  readonly chain_id: number
  readonly token_address: string | null
  readonly address: string | null
  readonly payment_link: string | null
  readonly attestation: {
    readonly domain: { name: string; version: string; chainId: number }
    readonly types: Record<string, Array<{ name: string; type: string }>>
    readonly primary_type: string
    readonly message: { depositRequest: string; chainId: number }
  } | null
  readonly expires_at: string
  readonly version: string
  readonly receipt: {
    readonly amount: string
    readonly amount_base_units: string
    readonly paid_at: string
    readonly transaction_hashes: ReadonlyArray<string>
  } | null
  readonly attachments: ReadonlyArray<{
    id: string
    file_name: string
    size_bytes: number
    download_url: string
  }>
  readonly returns: ReadonlyArray<{
    amount: string
    amount_base_units: string
    reason: string
    transaction_hash: string
  }>
}
