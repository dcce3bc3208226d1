import { createHmac, randomBytes } from "node:crypto"

/**
 * `Service-Signature: v1,t=<unix seconds>,sha256=<hex>`: the lowercase hex HMAC-SHA256, keyed with the endpoint's
 * secret, of the bytes `v1.` + t + `.` + the raw body. Receivers verify it in constant time on the raw bytes.
 */
export const signPayload = (
  secret: string,
  timestampSeconds: number,
  rawBody: string | Uint8Array
): string => {
  const mac = createHmac("sha256", secret)
  mac.update(`v1.${timestampSeconds}.`)
  mac.update(rawBody)
  return `v1,t=${timestampSeconds},sha256=${mac.digest("hex")}`
}

/** `whsec_` and 32 random bytes, base64url. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64url")}`

/**
 * The headers of every delivery of an event, signed at `timestampSeconds`: what an endpoint receives, and what a
 * listening CLI forwards unchanged.
 */
export const deliveryHeaders = (
  event: { readonly event_id: string; readonly type: string; readonly body: string },
  secret: string,
  timestampSeconds: number
): Record<string, string> => ({
  "content-type": "application/json",
  "service-event-id": `evt_${event.event_id}`,
  "service-event-type": event.type,
  "service-signature": signPayload(secret, timestampSeconds, event.body),
  "user-agent": "deposits-webhooks/1"
})
