/** USDC amounts from base-unit strings (6 decimals), with BigInt only: a float would round a payer's money. */
export const formatUnits = (units: bigint): string => {
  const negative = units < 0n
  const abs = negative ? -units : units
  const whole = abs / 1_000_000n
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0")
  return `${negative ? "-" : ""}${whole.toString()}.${fraction}`
}

/** What is still owed (never below zero). */
export const owed = (amountUnits: string, receivedUnits: string): bigint => {
  const left = BigInt(amountUnits) - BigInt(receivedUnits)
  return left > 0n ? left : 0n
}
