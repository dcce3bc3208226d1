/**
 * CSV as RFC 4180 reads it: every field quoted when it holds a comma, quote, CR or LF (quotes doubled), lines
 * ended CRLF. A field that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is
 * prefixed with `'`, so an exported reference cannot become a formula in the merchant's spreadsheet; a plain
 * number (`-1.5`) is left alone.
 */
export const csvField = (value: string): string => {
  const safe = /^[=+\-@\t\r]/.test(value) && !/^-?\d+(\.\d+)?$/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

export const csvLine = (fields: ReadonlyArray<string>): string => `${fields.map(csvField).join(",")}\r\n`

export const csv = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  csvLine(header) + rows.map(csvLine).join("")

/** The export's columns: amounts both as the API's decimal strings and as base units, metadata as JSON. */
export const REQUEST_COLUMNS = [
  "id",
  "created_at",
  "status",
  "amount",
  "amount_base_units",
  "received",
  "received_base_units",
  "settled_base_units",
  "heading",
  "reference",
  "customer_id",
  "issuer_id",
  "payout_address_id",
  "payer_wallet",
  "deposit_address",
  "expires_at",
  "transaction_hashes",
  "metadata"
] as const

/** What a row takes of a request, as the API shows it. */
export interface ExportedRequest {
  readonly id: string
  readonly created_at: string
  readonly status: string
  readonly amount: string
  readonly amount_base_units: string
  readonly received: string
  readonly received_base_units: string
  readonly heading: string
  readonly reference: string
  readonly customer_id: string | null
  readonly issuer_id: string
  readonly payout_address_id: string
  readonly payer_wallet: string | null
  readonly address: string | null
  readonly expires_at: string
  readonly metadata: unknown
  readonly settlement: { readonly amount_base_units: string } | null
}

/** One request as a row; its transfers' hashes (in, then out, by time) joined by spaces, each once. */
export const requestRow = (r: ExportedRequest, hashes: ReadonlyArray<string>): Array<string> => [
  r.id,
  r.created_at,
  r.status,
  r.amount,
  r.amount_base_units,
  r.received,
  r.received_base_units,
  r.settlement?.amount_base_units ?? "",
  r.heading,
  r.reference,
  r.customer_id ?? "",
  r.issuer_id,
  r.payout_address_id,
  r.payer_wallet ?? "",
  r.address ?? "",
  r.expires_at,
  [...new Set(hashes)].join(" "),
  JSON.stringify(r.metadata)
]
