import { MAX_AMOUNT_BASE_UNITS } from "../domain/Amount"
import { InvalidRequest, InvalidState, NotFound } from "../domain/Errors"
import { formatTimestamp } from "../domain/Timestamp"
import { digestHexOf } from "../platform/Secrets"

/** Default and bounds of a request's deadline. */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000
export const MIN_TTL_MS = 5 * 60 * 1000
export const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000
/** Largest amount one request may ask: 10^12 USDC, far above any payment and far below numeric limits. */
export { MAX_AMOUNT_BASE_UNITS }
/** Longest `return_url`, in characters: the length browsers and proxies reliably carry. */
export const MAX_RETURN_URL_LENGTH = 2048
/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000

export interface CreateInput {
  readonly amount: bigint
  readonly heading?: string | undefined
  readonly reference?: string | undefined
  readonly metadata?: Readonly<Record<string, string>> | undefined
  readonly customer_id?: string | undefined
  readonly issuer_id: string
  readonly payout_address_id: string
  /** Absent means `none`. */
  readonly payer_policy_mode?: "none" | "mailbox" | "merchant_session" | undefined
  readonly expected_email?: string | undefined
  readonly payer_reference?: string | undefined
  readonly expires_at?: Date | undefined
  /** Where the hosted checkout links the payer back to the merchant. */
  readonly return_url?: string | undefined
}

export const uuidOfId = (id: string) => id.slice(id.indexOf("_") + 1)

export const policyOf = (input: CreateInput) => input.payer_policy_mode ?? "none"

/**
 * The immutable fields, canonically ordered: a replay with the same key must carry the same ones. Mutable fields
 * (heading, reference, metadata, customer) are not compared, as they can change by PATCH anyway.
 */
export const fingerprintOf = (input: CreateInput) =>
  digestHexOf(
    JSON.stringify([
      input.amount.toString(),
      input.issuer_id,
      input.payout_address_id,
      policyOf(input),
      input.expected_email ?? null,
      input.payer_reference ?? null,
      input.expires_at?.toISOString() ?? null,
      input.return_url ?? null
    ])
  )

/** The sandbox's local shops: a return link to this machine may use plain http. */
const LOCAL_SHOP_HOST = /^(localhost|127\.0\.0\.1)$/i

/**
 * Why a `return_url` is refused, or undefined. The payer's browser follows it and the service never fetches it, so
 * no resolution: an absolute https URL (the sandbox also takes http://localhost and http://127.0.0.1), no
 * credentials, at most `MAX_RETURN_URL_LENGTH` characters.
 */
export const returnUrlRefusal = (raw: string, allowLocalShop: boolean): string | undefined => {
  if (raw.length > MAX_RETURN_URL_LENGTH) return `it must be at most ${MAX_RETURN_URL_LENGTH} characters`
  // The URL parser drops blanks at the ends and tabs and line breaks inside; the URL is taken as written or not at all.
  if (/\s/u.test(raw)) return "it must not contain blanks (spaces, tabs, line breaks)"
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "it must be an absolute URL"
  }
  const localShop = allowLocalShop && url.protocol === "http:" && LOCAL_SHOP_HOST.test(url.hostname)
  if (url.protocol !== "https:" && !localShop) {
    return allowLocalShop
      ? "it must use https:// (or http://localhost or http://127.0.0.1 in the sandbox)"
      : "it must use https://"
  }
  if (url.username !== "" || url.password !== "") return "it must not contain credentials"
  return undefined
}

/**
 * The rules a create's fields meet whatever the time: a body that breaks one can never have been accepted, so it is
 * refused before its Idempotency-Key is looked up (400, not a replay or a conflict). `allowLocalShop`: the
 * sandbox's relaxation of `return_url`.
 */
export const fieldRuleError = (input: CreateInput, allowLocalShop: boolean): InvalidRequest | undefined => {
  if (input.amount <= 0n)
    return new InvalidRequest({ message: "'amount' must be above zero.", param: "amount" })
  if (input.amount > MAX_AMOUNT_BASE_UNITS) {
    return new InvalidRequest({ message: "'amount' is above the largest amount allowed.", param: "amount" })
  }
  const policy = policyOf(input)
  if (policy === "mailbox" && input.expected_email === undefined) {
    return new InvalidRequest({
      message: "'expected_email' is required when payer_policy_mode is 'mailbox'.",
      param: "expected_email"
    })
  }
  if (policy !== "mailbox" && input.expected_email !== undefined) {
    return new InvalidRequest({
      message: "'expected_email' is only allowed when payer_policy_mode is 'mailbox'.",
      param: "expected_email"
    })
  }
  if (policy !== "merchant_session" && input.payer_reference !== undefined) {
    return new InvalidRequest({
      message: "'payer_reference' is only allowed when payer_policy_mode is 'merchant_session'.",
      param: "payer_reference"
    })
  }
  if (input.return_url !== undefined) {
    const refusal = returnUrlRefusal(input.return_url, allowLocalShop)
    if (refusal !== undefined) {
      return new InvalidRequest({ message: `'return_url' is refused: ${refusal}.`, param: "return_url" })
    }
  }
  return undefined
}

/**
 * The deadline at `now`, or the error when it is too near or too far. Time-dependent: a replay of a request that was
 * valid when first made is answered even if its deadline has since come too near, so this runs after the key lookup.
 */
export const deadlineOf = (input: CreateInput, now: Date): Date | InvalidRequest => {
  const expiresAt = input.expires_at ?? new Date(now.getTime() + DEFAULT_TTL_MS)
  const ttl = expiresAt.getTime() - now.getTime()
  if (ttl < MIN_TTL_MS || ttl > MAX_TTL_MS) {
    return new InvalidRequest({
      message: "'expires_at' must be between 5 minutes and 30 days from now.",
      param: "expires_at"
    })
  }
  return expiresAt
}

/** What the create's read found about the references it names. */
export interface References {
  readonly issuer: boolean
  readonly payout_address: string | null
  readonly payout_disabled: boolean | null
  /** When the payout address's hold ends (infra/decisions/0077-payout-address-hold.md); null without one. */
  readonly payout_held_until: Date | null
  readonly customer: boolean
}

/** A payout address still in its hold at `now`, as the 409 that says when it is released; else `undefined`. */
export const payoutHoldError = (heldUntil: Date | null, now: Date) =>
  heldUntil !== null && heldUntil.getTime() > now.getTime()
    ? new InvalidState({
        message: `The payout address is new and held until ${formatTimestamp(heldUntil)}: it takes no deposit request before then. Name another payout address, or try again after that time.`
      })
    : undefined

/** Validate, after the read: which reference is missing or unusable, as the error a merchant can act on. */
export const referenceError = (refs: References, input: CreateInput, now: Date) => {
  if (!refs.issuer) return NotFound.of("issuer")
  if (refs.payout_address === null) return NotFound.of("payout_address")
  if (refs.payout_disabled === true) {
    return new InvalidRequest({ message: "The payout address is disabled.", param: "payout_address_id" })
  }
  const held = payoutHoldError(refs.payout_held_until, now)
  if (held !== undefined) return held
  if (input.customer_id !== undefined && !refs.customer) return NotFound.of("customer")
  return undefined
}
