import type { MessageId, Msg } from "./messages"

/** The refusals a payer can meet, each with its sentence (the API's own message is for developers). */
const known = new Set<string>([
  "invalid_request",
  "invalid_state",
  "identity_unauthorized",
  "rate_limited",
  "deposit_request_not_found",
  "service_unavailable",
  "payload_too_large",
  "internal_error"
])

/** Every refusal of the payer routes as a sentence a payer understands, in the page's language. */
export const describeRefusal = (code: string | undefined, message: string | undefined): Msg => {
  if (code === "invalid_request" && message !== undefined && /code/i.test(message))
    return { id: "refusal.wrongCode" }
  if (code === "identity_unauthorized" && message !== undefined && /signature|statement/i.test(message))
    return { id: "refusal.badSignature" }
  return { id: code !== undefined && known.has(code) ? (`refusal.${code}` as MessageId) : "refusal.other" }
}
