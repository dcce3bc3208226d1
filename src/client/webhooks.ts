/**
 * Webhook verification for merchants' receivers (`deposit-request-service/webhooks`). One module for every
 * runtime: it uses only what Node 20+, Deno, Bun, Workers and browsers share (TextEncoder, TextDecoder and
 * `crypto.subtle`), no Node import and no Buffer, so `npm run build` emits it as one ES module that imports nothing;
 * the `Event` type comes from the contract and is erased at build time
 * ([0064](../../infra/decisions/0064-webhook-helpers.md), [0090](../../infra/decisions/0090-webhook-verifier-on-webcrypto.md)).
 * WebCrypto is asynchronous: `verify` and `sign` return Promises.
 */
import type { Schema } from "effect"
import type { Event as EventSchema } from "../http/Events/Api"

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

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The bytes as received, or why what was passed cannot be them. A Node Buffer is a Uint8Array. */
const rawBytes = (rawBody: unknown): Uint8Array => {
  if (typeof rawBody === "string") {
    if (rawBody === "[object Object]") throw new WebhookVerificationError("body_reserialised", REFUSED_PARSED)
    return encoder.encode(rawBody)
  }
  if (rawBody instanceof Uint8Array) return rawBody
  if (rawBody === undefined || rawBody === null) {
    throw new WebhookVerificationError(
      "body_reserialised",
      "No raw body: a body parser consumed the request before the webhook route. Read the raw bytes (express.raw, a buffer content-type parser, or c.req.text()) before any JSON parsing."
    )
  }
  throw new WebhookVerificationError("body_reserialised", REFUSED_PARSED)
}

/** A SHA-256 digest is 32 bytes, 64 hex characters. */
const DIGEST_BYTES = 32

/** Lowercase hex of bytes, by hand (no Buffer). */
const toHex = (bytes: Uint8Array) => {
  let hex = ""
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0")
  return hex
}

/** The bytes of a 64-character hex digest, or undefined for anything else. */
const fromHex = (hex: string): Uint8Array | undefined => {
  if (hex.length !== DIGEST_BYTES * 2 || !/^[0-9a-f]+$/i.test(hex)) return undefined
  const bytes = new Uint8Array(DIGEST_BYTES)
  for (let i = 0; i < DIGEST_BYTES; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return bytes
}

/** The HMAC-SHA256 key of an endpoint's secret (its UTF-8 bytes, as the service keys it). */
const hmacKey = (secret: string) =>
  crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify"
  ])

/** The signed bytes: `v1.` + t + `.` + the raw body. */
const signedBytes = (timestamp: number, raw: Uint8Array) => {
  const prefix = encoder.encode(`v1.${timestamp}.`)
  const bytes = new Uint8Array(prefix.byteLength + raw.byteLength)
  bytes.set(prefix, 0)
  bytes.set(raw, prefix.byteLength)
  return bytes
}

/** `v1,t=…,sha256=…` with one digest per secret, in the order given (newest first during a rotation). */
const signatureHeader = async (secrets: ReadonlyArray<string>, timestamp: number, raw: Uint8Array) => {
  const message = signedBytes(timestamp, raw)
  const digests: Array<string> = []
  for (const secret of secrets) {
    const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), message)
    digests.push(`sha256=${toHex(new Uint8Array(mac))}`)
  }
  return ["v1", `t=${timestamp}`, ...digests].join(",")
}

/**
 * Deliveries are sent as compact JSON. Bytes that are valid JSON but not in that form (indented, spaced, re-escaped)
 * were parsed and written out again on the way in: say so rather than "signature mismatch".
 */
const looksReserialised = (raw: Uint8Array) => {
  const text = decoder.decode(raw)
  try {
    return JSON.stringify(JSON.parse(text)) !== text
  } catch {
    return false
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The envelope every event has (the contract's `Event`): enough to route on `type` without trusting the rest. */
const decodeEvent = (raw: Uint8Array, eventIdHeader: string | undefined): Event => {
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(raw))
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
 * Verifies a delivery over its raw bytes (the spec's "Signature verification") and resolves to its event, or rejects
 * with a `WebhookVerificationError`. Pass several secrets while rotating (`[new, old]`): any one of them may have
 * signed, and a header carrying several `sha256=` elements passes when any one matches. Each digest is checked by
 * `crypto.subtle.verify`, which compares in constant time.
 */
export const verify = async (
  rawBody: string | Uint8Array,
  headers: DeliveryHeaders,
  secret: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): Promise<Event> => {
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
  const message = signedBytes(timestamp, raw)
  // A malformed digest is still checked (as zeros) and then refused, so every element costs one verify.
  const given = digests.map((hex) => fromHex(hex))
  let matched = false
  // During a rotation's grace the header carries one `sha256=` per live secret: any one that matches passes.
  for (const s of secrets) {
    const key = await hmacKey(s)
    // Every secret and digest is checked, so the time taken says nothing about which one matched.
    for (const digest of given) {
      const valid = await crypto.subtle.verify("HMAC", key, digest ?? new Uint8Array(DIGEST_BYTES), message)
      matched = (valid && digest !== undefined) || matched
    }
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
export const sign = async (
  body: string | Uint8Array,
  secret: string | ReadonlyArray<string>,
  options: { readonly timestamp?: number } = {}
): Promise<Record<string, string>> => {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000)
  const raw = typeof body === "string" ? encoder.encode(body) : body
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [SIGNATURE_HEADER]: await signatureHeader(typeof secret === "string" ? [secret] : secret, timestamp, raw)
  }
  try {
    const parsed: unknown = JSON.parse(decoder.decode(raw))
    if (isObject(parsed) && typeof parsed.id === "string") headers[EVENT_ID_HEADER] = parsed.id
    if (isObject(parsed) && typeof parsed.type === "string") headers[EVENT_TYPE_HEADER] = parsed.type
  } catch {
    // Not JSON: a test of a refused payload; only the signature then.
  }
  return headers
}
