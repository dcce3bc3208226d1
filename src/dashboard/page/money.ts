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
