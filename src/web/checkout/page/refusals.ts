/** Every refusal of the payer routes as a sentence a payer understands (the API's own message is for developers). */
const sentences: Record<string, string> = {
  invalid_request: "That did not look right. Check what you entered and try again.",
  invalid_state: "This step is no longer possible: the request has moved on. The page shows where it stands.",
  identity_unauthorized:
    "That could not be verified. Check it and try again, or ask the merchant for a new link.",
  rate_limited: "Too many tries for now. Wait a little, then try again.",
  deposit_request_not_found: "This payment request does not exist. Check the link the merchant gave you.",
  service_unavailable: "The service is busy for a moment. Try again in a few seconds.",
  payload_too_large: "That was too long. Try again with less.",
  internal_error: "Something went wrong on our side. Try again in a moment."
}

export const describeRefusal = (code: string | undefined, message: string | undefined): string => {
  if (code === "invalid_request" && message !== undefined && /code/i.test(message))
    return "That code is not right, or it has expired. Check the latest email, or send a new code."
  if (code === "identity_unauthorized" && message !== undefined && /signature|statement/i.test(message))
    return "The wallet's signature could not be checked. Sign again in your wallet."
  return (code !== undefined ? sentences[code] : undefined) ?? "Something went wrong. Try again in a moment."
}
