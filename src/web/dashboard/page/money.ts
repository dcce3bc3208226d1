/**
 * An amount as a merchant types it (`25`, `25.5`, `1,250.00`) in the API's form: exactly six decimals, by string
 * arithmetic alone (a float would round money). Anything else is refused with a sentence.
 */
export const toApiAmount = (typed: string): string => {
  const plain = typed.trim().replaceAll(",", "").replaceAll(" ", "")
  const match = /^(\d+)(?:\.(\d{0,6}))?$/.exec(plain)
  if (match === null)
    throw new Error("The amount must be a number of USDC with at most 6 decimals, such as 25.00.")
  const whole = (match[1] ?? "0").replace(/^0+(?=\d)/, "")
  return `${whole}.${(match[2] ?? "").padEnd(6, "0")}`
}

/**
 * A fresh Idempotency-Key (a UUID v4). `crypto.randomUUID` exists only in secure contexts; a sandbox opened over
 * plain HTTP on a LAN address is not one, and `getRandomValues` works everywhere.
 */
export const idempotencyKey = (): string => {
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
