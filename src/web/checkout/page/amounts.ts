/** USDC amounts from base-unit strings (6 decimals), with BigInt only: a float would round a payer's money. */
export const formatUnits = (units: bigint): string => {
  const negative = units < 0n
  const abs = negative ? -units : units
  const whole = abs / 1_000_000n
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0")
  return `${negative ? "-" : ""}${whole.toString()}.${fraction}`
}

/**
 * An amount the way people read money: thousands grouped, cents always shown, and every further digit kept when
 * it is not zero (`1,234.50`, `0.000001`), so nothing is rounded away. Base units in, BigInt only.
 */
export const formatMoney = (units: bigint): string => {
  const [whole = "0", fraction = "000000"] = formatUnits(units).split(".")
  const negative = whole.startsWith("-")
  const digits = negative ? whole.slice(1) : whole
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  const cents = fraction.replace(/0+$/, "").padEnd(2, "0")
  return `${negative ? "-" : ""}${grouped}.${cents}`
}

/** A base-unit string as money with its currency: `4.25 USDC`. */
export const usdc = (units: string | bigint): string => `${formatMoney(BigInt(units))} USDC`

/** What is still owed (never below zero). */
export const owed = (amountUnits: string, receivedUnits: string): bigint => {
  const left = BigInt(amountUnits) - BigInt(receivedUnits)
  return left > 0n ? left : 0n
}

/** The network a chain id names, as a payer's wallet shows it; the sandbox's chain is local and says so. */
export const networkName = (chainId: number, sandbox: boolean): string => {
  if (sandbox) return `the sandbox test network (chain ${chainId})`
  if (chainId === 143) return "Monad (chain 143)"
  if (chainId === 10143) return "Monad Testnet (chain 10143)"
  return `chain ${chainId}`
}
