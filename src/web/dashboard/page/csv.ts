/**
 * CSV as RFC 4180 reads it: every field quoted when it holds a comma, quote, CR or LF (quotes doubled), lines
 * ended CRLF. A field that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is
 * prefixed with `'`, so an exported reference cannot become a formula in the merchant's spreadsheet.
 */
import type { DepositRequest } from "./types"

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

/** What a row takes of a request (the contract's fields, so a renamed one fails the typecheck here). */
export type ExportedRequest = Pick<
  DepositRequest,
  | "id"
  | "created_at"
  | "status"
  | "amount"
  | "amount_base_units"
  | "received"
  | "received_base_units"
  | "heading"
  | "reference"
  | "customer_id"
  | "issuer_id"
  | "payout_address_id"
  | "payer_wallet"
  | "address"
  | "expires_at"
  | "metadata"
> & {
  readonly settlement: Pick<NonNullable<DepositRequest["settlement"]>, "amount_base_units"> | null
}

/** One request as a row; its transfers' hashes joined by spaces, in the order the API lists them. */
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
