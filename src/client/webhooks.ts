/**
 * Webhook verification for merchants' receivers (`deposit-request-service/webhooks`). It runs standalone in plain
 * Node 20: its only runtime import is node:crypto (through the service's own signer), so `npm run build` emits it
 * as one small ES module; the `Event` type comes from the contract and is erased at build time
 * ([0064](../../infra/decisions/0064-webhook-helpers.md)).
 */
import { timingSafeEqual } from "node:crypto"
import type { Schema } from "effect"
import type { Event as EventSchema } from "../http/Events/Api"
import { signPayload } from "../../services/webhooks/WebhookSignature"

/** Every event a delivery carries, told apart by `type` (the contract's `Event`). */
export type Event = Schema.Schema.Type<typeof EventSchema>
export type EventType = Event["type"]

export type WebhookVerificationErrorCode =
  | "missing_header"
  | "unsupported_scheme"
  | "timestamp_outside_tolerance"
  | "signature_mismatch"
  | "body_reserialised"
  | "invalid_payload"

/** Why a delivery was refused; `code` is stable, `message` says what to fix. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string
  ) {
    super(message)
  }
}

/** Node's `req.headers` (lowercase names), a Fetch `Headers` (Hono's `c.req.raw.headers`), or a plain record. */
export type DeliveryHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface VerifyOptions {
  /** Seconds a signature's `t` may differ from now, either way. Default 300. */
  readonly tolerance?: number
  /** Now, in Unix seconds (tests). Default the clock. */
  readonly now?: number
}

export const SIGNATURE_HEADER = "service-signature"
export const EVENT_ID_HEADER = "service-event-id"
export const EVENT_TYPE_HEADER = "service-event-type"

const header = (headers: DeliveryHeaders, name: string): string | undefined => {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined
  }
  const record = headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return typeof value === "string" ? value : value?.[0]
}

const REFUSED_PARSED =
  "The body was parsed as JSON before verification: pass the raw request bytes (a string or Buffer exactly as received), e.g. express.raw({ type: 'application/json' }) on the webhook route."

/** The bytes as received, or why what was passed cannot be them. */
const rawBytes = (rawBody: unknown): Buffer => {
  if (typeof rawBody === "string") {
    if (rawBody === "[object Object]") throw new WebhookVerificationError("body_reserialised", REFUSED_PARSED)
    return Buffer.from(rawBody, "utf8")
  }
  if (rawBody instanceof Uint8Array)
    return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength)
  if (rawBody === undefined || rawBody === null) {
    throw new WebhookVerificationError(
      "body_reserialised",
      "No raw body: a body parser consumed the request before the webhook route. Read the raw bytes (express.raw, a buffer content-type parser, or c.req.text()) before any JSON parsing."
    )
  }
  throw new WebhookVerificationError("body_reserialised", REFUSED_PARSED)
}

/** Constant-time equality of two hex digests; a digest of the wrong length is compared with itself, then refused. */
const sameDigest = (givenHex: string, expectedHex: string) => {
  const expected = Buffer.from(expectedHex, "hex")
  const given = /^[0-9a-f]+$/i.test(givenHex) ? Buffer.from(givenHex, "hex") : Buffer.alloc(0)
  if (given.length !== expected.length) {
    timingSafeEqual(expected, expected)
    return false
  }
  return timingSafeEqual(given, expected)
}

/**
 * Deliveries are sent as compact JSON. Bytes that are valid JSON but not in that form (indented, spaced, re-escaped)
 * were parsed and written out again on the way in: say so rather than "signature mismatch".
 */
const looksReserialised = (raw: Buffer) => {
  const text = raw.toString("utf8")
  try {
    return JSON.stringify(JSON.parse(text)) !== text
  } catch {
    return false
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The envelope every event has (the contract's `Event`): enough to route on `type` without trusting the rest. */
const decodeEvent = (raw: Buffer, eventIdHeader: string | undefined): Event => {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw.toString("utf8"))
  } catch {
    throw new WebhookVerificationError("invalid_payload", "The signed body is not JSON.")
  }
  if (
    !isObject(parsed) ||
    typeof parsed.id !== "string" ||
    !parsed.id.startsWith("evt_") ||
    typeof parsed.type !== "string" ||
    typeof parsed.occurred_at !== "string" ||
    !isObject(parsed.data)
  ) {
    throw new WebhookVerificationError(
      "invalid_payload",
      "The signed body is not an event: it needs an `evt_` id, a type, occurred_at and a data object."
    )
  }
  if (eventIdHeader !== undefined && eventIdHeader !== parsed.id) {
    throw new WebhookVerificationError(
      "invalid_payload",
      `The body's id ${parsed.id} differs from the Service-Event-Id header ${eventIdHeader}.`
    )
  }
  if (
    parsed.type === "webhook.test"
      ? typeof parsed.data.webhook_id !== "string"
      : !isObject(parsed.data.deposit_request)
  ) {
    throw new WebhookVerificationError(
      "invalid_payload",
      `The ${parsed.type} event lacks its data (${parsed.type === "webhook.test" ? "webhook_id" : "deposit_request"}).`
    )
  }
  return parsed as unknown as Event
}

/**
 * Verifies a delivery over its raw bytes (the spec's "Signature verification") and returns its event, or throws a
 * `WebhookVerificationError`. Pass several secrets while rotating (`[new, old]`): any one of them may have signed.
 */
export const verify = (
  rawBody: string | Uint8Array,
  headers: DeliveryHeaders,
  secret: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): Event => {
  const secrets = typeof secret === "string" ? [secret] : secret
  if (secrets.length === 0 || secrets.some((s) => typeof s !== "string" || s.length === 0)) {
    throw new TypeError("verify needs the endpoint's secret (whsec_…), or a non-empty list of them.")
  }
  const signature = header(headers, SIGNATURE_HEADER)
  if (signature === undefined || signature === "") {
    throw new WebhookVerificationError("missing_header", "No Service-Signature header.")
  }
  const [scheme, ...fields] = signature.split(",").map((part) => part.trim())
  if (scheme !== "v1") {
    throw new WebhookVerificationError(
      "unsupported_scheme",
      `Service-Signature uses the scheme ${JSON.stringify(scheme)}; only v1 is supported.`
    )
  }
  const field = (name: string) => fields.find((f) => f.startsWith(`${name}=`))?.slice(name.length + 1)
  const t = field("t")
  const digests = fields.filter((f) => f.startsWith("sha256=")).map((f) => f.slice("sha256=".length))
  if (t === undefined || !/^\d+$/.test(t) || digests.length === 0) {
    throw new WebhookVerificationError("missing_header", "Service-Signature lacks its t= or sha256= part.")
  }
  const raw = rawBytes(rawBody)
  const tolerance = options.tolerance ?? 300
  const now = options.now ?? Math.floor(Date.now() / 1000)
  const timestamp = Number(t)
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_outside_tolerance",
      `The signature's timestamp is ${Math.abs(now - timestamp)} s ${timestamp < now ? "old" : "in the future"}; the tolerance is ${tolerance} s.`
    )
  }
  let matched = false
  // During a rotation's grace the header carries one `sha256=` per live secret: any one that matches passes.
  for (const s of secrets) {
    const expected = signPayload(s, timestamp, raw).split("sha256=")[1] ?? ""
    // Every secret and digest is compared, so the time taken says nothing about which one matched.
    for (const given of digests) matched = sameDigest(given, expected) || matched
  }
  if (!matched) {
    if (looksReserialised(raw)) {
      throw new WebhookVerificationError(
        "body_reserialised",
        "The signature does not match, and the body is JSON written out differently from how deliveries are sent: it was parsed and re-serialised. Verify the raw bytes as received."
      )
    }
    throw new WebhookVerificationError(
      "signature_mismatch",
      "No secret's signature matches the body. Check the endpoint's secret (during a rotation pass [new, old]) and that the body is the raw bytes as received."
    )
  }
  return decodeEvent(raw, header(headers, EVENT_ID_HEADER))
}

/**
 * The headers a delivery of `body` carries, signed with `secret` now or at `timestamp` (Unix seconds): for tests.
 * Several secrets (`[new, old]`) give the header of a delivery during a rotation's grace, one `sha256=` each.
 */
export const sign = (
  body: string | Uint8Array,
  secret: string | ReadonlyArray<string>,
  options: { readonly timestamp?: number } = {}
): Record<string, string> => {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000)
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8")
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [SIGNATURE_HEADER]: signPayload(secret, timestamp, body)
  }
  try {
    const parsed: unknown = JSON.parse(text)
    if (isObject(parsed) && typeof parsed.id === "string") headers[EVENT_ID_HEADER] = parsed.id
    if (isObject(parsed) && typeof parsed.type === "string") headers[EVENT_TYPE_HEADER] = parsed.type
  } catch {
    // Not JSON: a test of a refused payload; only the signature then.
  }
  return headers
}
