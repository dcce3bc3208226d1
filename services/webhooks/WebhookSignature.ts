import { createHmac, randomBytes } from "node:crypto"

const digest = (secret: string, timestampSeconds: number, rawBody: string | Uint8Array) => {
  const mac = createHmac("sha256", secret)
  mac.update(`v1.${timestampSeconds}.`)
  mac.update(rawBody)
  return mac.digest("hex")
}

/**
 * `Service-Signature: v1,t=<unix seconds>,sha256=<hex>`: the lowercase hex HMAC-SHA256, keyed with the endpoint's
 * secret, of the bytes `v1.` + t + `.` + the raw body. Receivers verify it in constant time on the raw bytes.
 * During a secret rotation's grace each live secret adds its own `sha256=` element, newest first
 * (infra/decisions/0083-webhook-secret-rotation.md); any one that matches passes.
 */
export const signPayload = (
  secret: string | ReadonlyArray<string>,
  timestampSeconds: number,
  rawBody: string | Uint8Array
): string => {
  const secrets = typeof secret === "string" ? [secret] : secret
  const digests = secrets.map((s) => `sha256=${digest(s, timestampSeconds, rawBody)}`)
  return [`v1`, `t=${timestampSeconds}`, ...digests].join(",")
}

/** `whsec_` and 32 random bytes, base64url. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64url")}`

/**
 * The headers of every delivery of an event, signed at `timestampSeconds`: what an endpoint receives, and what a
 * listening CLI forwards unchanged.
 */
export const deliveryHeaders = (
  event: { readonly event_id: string; readonly type: string; readonly body: string },
  secret: string | ReadonlyArray<string>,
  timestampSeconds: number
): Record<string, string> => ({
  "content-type": "application/json",
  "service-event-id": `evt_${event.event_id}`,
  "service-event-type": event.type,
  "service-signature": signPayload(secret, timestampSeconds, event.body),
  "user-agent": "deposits-webhooks/1"
})
